"""One module per ``robomemory bench NAME`` (see robomemory/cli.py): each has
``add_arguments(parser)`` and ``main(args)``; ``kg_oracle`` and ``memory_scale_longterm`` are
helpers of ``kg-growth`` and ``memory-scale`` / ``mem0-compare``."""
