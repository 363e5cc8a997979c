"""Camera frame helpers: resize-with-pad for the policy, JPEG data URLs for the planner's VLM."""

from __future__ import annotations

import base64
import io

import numpy as np
from PIL import Image


def to_uint8(frame: np.ndarray) -> np.ndarray:
    """uint8 pixels; float frames are taken as [0, 1] and scaled by 255 (as openpi does)."""
    frame = np.asarray(frame)
    if frame.dtype == np.uint8:
        return frame
    if np.issubdtype(frame.dtype, np.floating):
        return np.clip(np.nan_to_num(frame) * 255.0, 0, 255).astype(np.uint8)
    return np.clip(frame, 0, 255).astype(np.uint8)


def resize_with_pad(frame: np.ndarray, height: int, width: int) -> np.ndarray:
    """Resize an H×W×3 frame to fit ``height``×``width`` keeping aspect, pad with black."""
    frame = to_uint8(frame)
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
    img = Image.fromarray(to_uint8(frame))
    if max(img.size) > max_side:
        img.thumbnail((max_side, max_side))
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
