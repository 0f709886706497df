"""The reference web client's pages (services/webclient): ``/`` its page, ``/app/{file}`` its scripts and style.

The page is the same for every path of the client (the client reads the game and seat from the URL's hash), so a
reload anywhere lands here. The files are those built into the Python package: nothing is fetched from a CDN.
"""

from __future__ import annotations

from litestar import Response, get
from litestar.datastructures import CacheControlHeader
from litestar.router import Router
from litestar.static_files import create_static_files_router

from services.webclient import INDEX, STATIC

APP = "/app"


@get("/", include_in_schema=False, cache_control=CacheControlHeader(no_cache=True))
async def index() -> Response[bytes]:
    return Response(INDEX.read_bytes(), media_type="text/html; charset=utf-8")


def assets() -> Router:
    """``/app/{file}``: revalidated on each load (``no-cache``), so a new build is seen at once."""
    return create_static_files_router(path=APP, directories=[STATIC], name="web-assets", include_in_schema=False,
                                      cache_control=CacheControlHeader(no_cache=True))
