"""A small, dependency-free safetensors reader/writer for the tools and reference scripts.

Same layout as nn/safetensors.h: an 8-byte little-endian header length N, N bytes of JSON
({"name": {"dtype", "shape", "data_offsets"}, optional "__metadata__"}) padded with spaces to a
multiple of 8, then the raw little-endian data. Writes order tensors like the reference
implementation (wider dtypes first, then by name) and replace the target file atomically.
Needs only numpy (torch tensors are accepted and returned when torch is importable).
"""
import json
import os
import struct

import numpy as np

_NP = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
       "I8": "i1", "U8": "u1", "BOOL": "?"}


def _dtype_name(name, a):
    for k, v in _NP.items():
        if a.dtype == np.dtype(v):
            return k
    raise ValueError(f"tensor '{name}': dtype {a.dtype} has no safetensors name")


def _to_numpy(t):
    if hasattr(t, "detach"):  # torch.Tensor
        t = t.detach().cpu().contiguous().numpy()
    return np.ascontiguousarray(t)


def write_atomic(path, data: bytes):
    """Writes bytes to path through a temporary file, fsync and rename."""
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def to_bytes(tensors: dict, metadata=None) -> bytes:
    arrays = {name: _to_numpy(t) for name, t in tensors.items()}
    order = sorted(arrays, key=lambda n: (-arrays[n].dtype.itemsize, n))
    header, pos, chunks = {}, 0, []
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name in order:
        a = arrays[name]
        dtype = _dtype_name(name, a)
        raw = a.astype(np.dtype(_NP[dtype]), copy=False).tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [pos, pos + len(raw)]}
        pos += len(raw)
        chunks.append(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def save_file(tensors: dict, path, metadata=None):
    """Saves {name: tensor or array} (float32/float64/...) to path, atomically."""
    write_atomic(path, to_bytes(tensors, metadata))


def load_file(path, as_torch=True):
    """Returns ({name: tensor}, metadata) with tensors in the file's dtypes."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    (n,) = struct.unpack("<Q", data[:8])
    if n > min(100_000_000, len(data) - 8):
        raise ValueError(f"{path}: header length {n} is larger than the file")
    header = json.loads(data[8:8 + n])
    metadata = header.pop("__metadata__", {})
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        a = np.frombuffer(data[8 + n + b:8 + n + e], dtype=_NP[info["dtype"]]).reshape(info["shape"])
        if as_torch:
            import torch
            a = torch.from_numpy(a.copy())
        out[name] = a
    return out, metadata
