"""Submitted figures made safe to publish: PNGs decoded and re-encoded, SVGs rebuilt from an allow-list.

A results folder may hold report figures. The leaderboard never copies their bytes as they are: a PNG is
decoded and written again (no text chunks, nothing after the image), and an SVG is parsed and rebuilt with
only drawing elements and attributes, every script, event handler, foreign object and external reference
removed. A figure that cannot be made safe is dropped, and `clean_figure` says why.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

MAX_PIXELS = 40_000_000
"""Largest PNG (width x height) re-encoded."""

_SVG = "http://www.w3.org/2000/svg"
_XLINK = "http://www.w3.org/1999/xlink"
_ELEMENTS = frozenset({
    "svg", "g", "defs", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text", "tspan",
    "clipPath", "use", "style", "title", "desc", "linearGradient", "radialGradient", "stop", "mask", "pattern",
    "symbol", "marker",
})
_UNSAFE_VALUE = re.compile(r"javascript:|vbscript:|data:|url\((?!#)|@import|expression\(|<|\\|/\*", re.IGNORECASE)
"""Values that may run script or fetch something, searched with whitespace and control characters removed (a
browser skips them inside a URL scheme); CSS escapes and comments are refused, since they could spell any of it."""
_IGNORED = re.compile(r"[\x00-\x20\x7f]+")


def _unsafe(value: str) -> bool:
    return bool(_UNSAFE_VALUE.search(_IGNORED.sub("", value)))


class FigureError(ValueError):
    """A figure that cannot be made safe to publish."""


def clean_figure(path: Path) -> bytes:
    """The bytes to publish for a PNG or SVG figure: re-encoded or sanitised, never the file as it is.

    Raises:
        FigureError: the figure is not a decodable PNG, or not a well-formed SVG without entity declarations.
    """
    data = path.read_bytes()
    return _png(data) if path.suffix.lower() == ".png" else _svg(data)


def _png(data: bytes) -> bytes:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data), formats=["PNG"]) as image:
            if image.width * image.height > MAX_PIXELS:
                raise FigureError(f"{image.width} x {image.height} pixels, over {MAX_PIXELS}")
            image.load()
            out = io.BytesIO()
            image.save(out, format="PNG")
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise FigureError(f"not a decodable PNG ({exc})") from exc
    return out.getvalue()


def _svg(data: bytes) -> bytes:
    if re.search(rb"<!ENTITY", data, re.IGNORECASE):
        raise FigureError("an SVG declaring XML entities")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise FigureError(f"not a well-formed SVG ({exc})") from exc
    if root.tag != f"{{{_SVG}}}svg":
        raise FigureError(f"an XML document whose root is {root.tag!r}, not an SVG")
    _clean(root)
    ET.register_namespace("", _SVG)
    ET.register_namespace("xlink", _XLINK)
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="utf-8", xml_declaration=False)


def _clean(element: ET.Element) -> None:
    """Drop, in place, every child element and attribute outside the allow-list."""
    for child in list(element):
        namespace, _, name = child.tag.rpartition("}")
        if namespace.lstrip("{") != _SVG or name not in _ELEMENTS:
            element.remove(child)
        elif name == "style" and _unsafe(child.text or ""):
            element.remove(child)
        else:
            _clean(child)
    for attribute, value in list(element.attrib.items()):
        local = attribute.rpartition("}")[2]
        is_link = local == "href"
        if local.lower().startswith("on") or (is_link and not value.startswith("#")) or \
                (not is_link and _unsafe(value)):
            del element.attrib[attribute]
