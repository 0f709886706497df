"""The API's documentation pages, served by the gateway itself: nothing loaded from a public CDN.

``/schema`` and ``/schema/swagger``: Swagger UI (5.x, which reads OpenAPI 3.1), its scripts, style and icon from
the ``swagger-ui-bundle-v2`` package (``swagger_ui_bundle``, the assets of the swagger-ui-dist release it names),
served under ``/schema/assets/``; the document inline in the page. ``/schema/openapi.json`` (and ``.yaml``): the
document. Litestar's other pages (Redoc, Stoplight Elements, RapiDoc, Scalar) load their scripts from CDNs and
no package carries them without a web framework of its own: they are not served.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import Request
from litestar.datastructures import CacheControlHeader
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin, SwaggerRenderPlugin, YamlRenderPlugin
from litestar.router import Router
from litestar.static_files import create_static_files_router
from swagger_ui_bundle import swagger_ui_path

from services.gateway import openapi

SCHEMA = "/schema"
ASSETS = f"{SCHEMA}/assets"


class _Typed:
    """A render plugin given the document typed per game (``services.gateway.openapi.served``)."""

    def render(self, request: Request, openapi_schema: dict[str, Any]) -> bytes:
        return super().render(request, openapi.served(request.app))  # type: ignore[misc]


class Swagger(_Typed, SwaggerRenderPlugin):
    pass


class Json(_Typed, JsonRenderPlugin):
    pass


class Yaml(_Typed, YamlRenderPlugin):
    pass


def render_plugins() -> list[OpenAPIRenderPlugin]:
    return [
        Swagger(path=["/", "/swagger"], js_url=f"{ASSETS}/swagger-ui-bundle.js",
                            css_url=f"{ASSETS}/swagger-ui.css",
                            standalone_preset_js_url=f"{ASSETS}/swagger-ui-standalone-preset.js",
                            favicon=f"<link rel='icon' type='image/png' href='{ASSETS}/favicon-32x32.png'>"),
        Json(),
        Yaml(),
    ]


def assets() -> Router:
    """``/schema/assets/{file}``: Swagger UI's files (cached a day by browsers)."""
    return create_static_files_router(path=ASSETS, directories=[Path(str(swagger_ui_path))], name="docs-assets",
                                      include_in_schema=False, cache_control=CacheControlHeader(max_age=86_400))
