"""Evidence as untrusted data, for the judge: excerpts framed in labelled blocks, and read-only tools.

Every excerpt, image and tool result is wrapped in an ``<evidence ... untrusted="true">`` block whose
path and attributes are escaped and whose body cannot contain a delimiter (every look-alike is defused),
so a submission can neither close its block early nor open a trusted one.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ...evidence import Evidence, MissingEvidence, normalize, read_manifest
from ...io import Walk
from ...rubric.tree import Leaf
from .settings import JudgeSettings

TEXT_SUFFIXES = (".txt", ".log", ".md", ".csv", ".json", ".py", ".sh", ".toml", ".yaml", ".yml", ".in", ".out",
                 ".xml", ".dat", ".tsv", ".cfg", ".ini", ".s1p", ".s2p", ".ctl")
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}


# anything a model could read as an evidence delimiter: "<", its entities and look-alikes, then optional
# whitespace (zero-width too), an optional "/", and "evidence", in any case
_OPEN = r"(?:<|&lt;?|&#0*60;?|&#x0*3c;?|\uFF1C|\uFE64|\u2039|\u27E8|\u3008|\u2329)"
_GAP = r"[\s\u200b-\u200d\u2060\ufeff]*"
_DELIMITER = re.compile(_OPEN + _GAP + r"(/?)" + _GAP + r"(evidence)", re.IGNORECASE)


def neutralise(text: str) -> str:
    """Submission text with every look-alike of an evidence delimiter defused ("<\\evidence", "<\\/evidence"),
    so the submission cannot close its block early or open one of its own, whatever case, spacing,
    entity or look-alike character it uses."""
    return _DELIMITER.sub(lambda m: "<\\" + m.group(1) + m.group(2), text)


def _attr(value: Any) -> str:
    return neutralise(str(value)).replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(
        ">", "&gt;").replace("\n", " ")


def _block(path: str, body: str, **attrs: Any) -> str:
    """One piece of evidence framed as untrusted data; its path and attributes (submission-chosen file
    names included) are escaped, and the body cannot contain a delimiter."""
    head = " ".join([f'path="{_attr(path)}"', 'untrusted="true"', *(f'{k}="{_attr(v)}"' for k, v in attrs.items())])
    return f"<evidence {head}>\n{neutralise(body)}\n</evidence>"


def _image_parts(path: str, digest: str, mime: str, data: str) -> list[dict[str, Any]]:
    """An image as untrusted evidence: framed by an evidence block naming its path and hash, like text."""
    head = f'path="{_attr(path)}" untrusted="true" kind="image" sha256="{_attr(digest)}"'
    return [{"type": "text", "text": f"<evidence {head}>"},
            {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}},
            {"type": "text", "text": "</evidence>"}]


def _files_under(ev: Evidence, rel: str) -> list[str]:
    p = ev.resolve(rel)
    if p.is_file():
        return [normalize(rel)]
    base = normalize(rel).rstrip("/")
    return sorted(f"{base}/{e.rel}" for e in Walk(p) if e.is_file)


def _sized(ev: Evidence, files: list[str]) -> list[str]:
    return [f"{f}  {ev.resolve(f).stat().st_size} bytes" for f in files]


def _listing(ev: Evidence, rel: str, files: list[str], recursive: bool, limit: int = 200) -> str:
    """A directory input's files with their sizes: every file below it when the rubric says ``recursive``,
    else its own files and one line per subfolder (what a judge opens with list_dir)."""
    base = normalize(rel).rstrip("/") + "/"
    below = [f[len(base):] for f in files]  # relative to the input's directory
    own = [f for f, r in zip(files, below, strict=True) if recursive or "/" not in r]
    folders = Counter(base + r.split("/", 1)[0] + "/" for r in below if not recursive and "/" in r)
    lines = _sized(ev, own[:limit])
    lines += [f"{d}  folder of {n} file(s), not listed (list_dir)" for d, n in sorted(folders.items())[:limit]]
    return f"directory with {len(files)} file(s):\n" + "\n".join(lines)


def read_excerpt(ev: Evidence, rel: str, limit: int) -> str:
    data = ev.read_bytes(rel, limit + 1)
    text = data[:limit].decode("utf-8", errors="replace")
    if len(data) > limit:
        text += f"\n[... truncated at {limit} bytes; use read_text with an offset for more ...]"
    return text


def gather_evidence(ev: Evidence, leaf: Leaf, settings: JudgeSettings) -> tuple[list[Any], dict[str, str], list[str]]:
    """(content parts for the user message, {evidence path: sha256} for the fingerprint, missing paths)."""
    manifest = read_manifest(ev.root)
    blocks, images, hashes, missing = [], [], {}, []
    for inp in leaf.node.evidence_inputs:
        rel = normalize(inp.path)
        try:
            files = _files_under(ev, rel)
        except MissingEvidence:
            missing.append(rel)
            blocks.append(_block(rel, "(missing: not in the evidence)", role=inp.role or ""))
            continue
        for f in files:
            hashes[f] = manifest.get(f, "?")
        if len(files) != 1 or files[0] != rel:  # a directory: list it (the judge reads files with its tools)
            blocks.append(_block(rel, _listing(ev, rel, files, inp.recursive), role=inp.role or ""))
            continue
        suffix = Path(rel).suffix.lower()
        size = ev.resolve(rel).stat().st_size
        if suffix in IMAGE_TYPES and not settings.images:
            blocks.append(_block(rel, f"(image, {size} bytes, not shown: the judge model reads no images)",
                                 role=inp.role or "", sha256=hashes[rel]))
        elif suffix in IMAGE_TYPES and size <= settings.image_bytes:
            data = base64.b64encode(ev.read_bytes(rel, settings.image_bytes)).decode()
            images += _image_parts(rel, hashes[rel], IMAGE_TYPES[suffix], data)
            blocks.append(_block(rel, f"(image, {size} bytes, attached below)", role=inp.role or "",
                                 sha256=hashes[rel]))
        elif suffix in TEXT_SUFFIXES or size < 4096:
            blocks.append(_block(rel, read_excerpt(ev, rel, settings.excerpt_bytes), role=inp.role or "",
                                 bytes=size, sha256=hashes[rel]))
        else:
            blocks.append(_block(rel, f"(binary file, {size} bytes; use array_stats or read_text)",
                                 role=inp.role or "", sha256=hashes[rel]))
    return [*blocks, *images], hashes, missing  # images: text and image parts, each image framed


# --- read-only evidence tools ----------------------------------------------------------------------

def _tool(name: str, description: str, required: tuple[str, ...] = (), **props: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": {k: {"type": v} for k, v in props.items()}, "required": list(required)}}}


TOOLS = [
    _tool("list_files", "List evidence files under a path.", path="string"),
    _tool("read_text", "Read part of a text evidence file.", ("path",), path="string", offset="integer",
          length="integer"),
    _tool("read_csv", "Rows of a CSV evidence file.", ("path",), path="string", start="integer", rows="integer"),
    _tool("read_json", "A JSON evidence file, or one key of it (dotted).", ("path",), path="string", key="string"),
    _tool("array_stats", "Shape and statistics of .npy/.npz/.csv data.", ("path",), path="string", key="string"),
]


def run_tool(ev: Evidence, name: str, args: dict[str, Any], limit: int) -> str:
    """One tool call's answer: an evidence block, or an ``error:`` line for what the evidence does not have."""
    path = str(args.get("path") or "submission")
    try:
        if name == "list_files":
            files = _files_under(ev, path)
            return _block(path, "\n".join(_sized(ev, files[:500])))
        if name == "read_text":
            data = ev.read_bytes(path, int(args.get("offset", 0)) + min(int(args.get("length", 8000)), limit))
            return _block(path, data[int(args.get("offset", 0)):].decode("utf-8", errors="replace"))
        if name == "read_csv":
            df = ev.read_csv(path)
            start, rows = int(args.get("start", 0)), min(int(args.get("rows", 50)), 500)
            return _block(path, f"{len(df)} rows x {len(df.columns)} columns\n" + df.iloc[start:start + rows].to_csv())
        if name == "read_json":
            data = ev.read_json(path)
            if args.get("key"):
                for part in str(args["key"]).split("."):
                    data = data[int(part)] if isinstance(data, list) else data[part]
            return _block(path, json.dumps(data, indent=1)[:limit])
        if name == "array_stats":
            import numpy as np

            arr = np.asarray(ev.load_array(path, args.get("key")), dtype=float)
            finite = arr[np.isfinite(arr)]
            stats = {"shape": list(arr.shape), "finite": int(finite.size), "nan_or_inf": int(arr.size - finite.size)}
            if finite.size:
                stats.update(min=float(finite.min()), max=float(finite.max()), mean=float(finite.mean()),
                             std=float(finite.std()))
            return _block(path, json.dumps(stats))
    except MissingEvidence as exc:
        return f"error: {exc}"
    except (KeyError, IndexError, ValueError, TypeError) as exc:
        return f"error: {type(exc).__name__}: {exc}"
    return f"error: unknown tool {name!r}"
