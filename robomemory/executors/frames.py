"""Camera frame helpers: resize-with-pad for the policy, JPEG data URLs for the planner's VLM."""

from __future__ import annotations

import base64
import io

import numpy as np
from PIL import Image


def resize_with_pad(frame: np.ndarray, height: int, width: int) -> np.ndarray:
    """Resize an H×W×3 uint8 frame to fit ``height``×``width`` keeping aspect, pad with black."""
    frame = np.asarray(frame)
    if frame.dtype != np.uint8:
        frame = np.clip(frame, 0, 255).astype(np.uint8)
    h, w = frame.shape[:2]
    if (h, w) == (height, width):
        return frame
    scale = min(height / h, width / w)
    nh, nw = max(1, round(h * scale)), max(1, round(w * scale))
    img = Image.fromarray(frame).resize((nw, nh), Image.Resampling.BILINEAR)
    out = np.zeros((height, width, 3), dtype=np.uint8)
    top, left = (height - nh) // 2, (width - nw) // 2
    out[top : top + nh, left : left + nw] = np.asarray(img)
    return out


def to_chw(frame: np.ndarray) -> np.ndarray:
    """H×W×C → C×H×W (openpi's ALOHA input layout)."""
    return np.ascontiguousarray(np.transpose(frame, (2, 0, 1)))


def jpeg_data_url(frame: np.ndarray, quality: int = 80, max_side: int = 640) -> str:
    """An H×W×3 uint8 frame as a ``data:image/jpeg;base64,...`` URL."""
    img = Image.fromarray(np.asarray(frame, dtype=np.uint8))
    if max(img.size) > max_side:
        img.thumbnail((max_side, max_side))
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
