"""The routes of users' own things: the session (who am I; the workbench's login) and document collections
(list them; upload, list and delete documents in your own). Routes only translate HTTP to the service."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response

from deepresearch.api.access import (
    SESSION_COOKIE,
    PrincipalDep,
    ServiceDep,
    request_principal,
    session_cookie,
    session_cookie_name,
    unauthorised,
)
from deepresearch.api.errors import error_responses
from deepresearch.options import CORPUS_NAME_PATTERN
from deepresearch.service.auth import Principal, Tokens
from deepresearch.service.collections import FILE_NAME_PATTERN, MEDIA_TYPES
from deepresearch.service.contracts import (
    CollectionsPublic,
    DocumentPublic,
    DocumentsPublic,
    SessionCreate,
    SessionPublic,
)
from deepresearch.service.runs import RunService

# the name rules are checked by the service, whose messages say what is allowed (a pattern's would not); the
# patterns are stated in OpenAPI only (json_schema_extra), for clients and fuzzers
CollectionName = Annotated[
    str,
    Path(
        max_length=64,
        description="A collection's name (options.corpus).",
        json_schema_extra={"pattern": CORPUS_NAME_PATTERN},
    ),
]
FileName = Annotated[
    str,
    Path(
        max_length=200,
        description="The document's file name (.md .txt .html .htm .pdf).",
        json_schema_extra={"pattern": FILE_NAME_PATTERN},
    ),
]

session = APIRouter(prefix="/api/session", tags=["session"])
# the cookie of releases before server-side sessions held the token itself: browsers are told to drop it
_TOKEN_COOKIE = "deepresearch_token"


async def _session(request: Request, service: RunService, principal: Principal) -> SessionPublic:
    return SessionPublic(
        user=principal.user,
        admin=principal.admin,
        token_required=request.app.state.access.token_required,
        collections=await asyncio.to_thread(service.collections.names, principal),  # lists folders
    )


@session.get("", response_model=SessionPublic, responses=error_responses(401))
async def get_session(request: Request, service: ServiceDep, principal: PrincipalDep) -> SessionPublic:
    """Who this client is, and whether this server requires a token."""
    return await _session(request, service, principal)


@session.post("", response_model=SessionPublic, responses=error_responses(400, 401, 403, 413, 422))
async def create_session(request: Request, body: SessionCreate, service: ServiceDep) -> Response:
    """Sign the workbench in with a token: a new server-side session (expiring after
    DEEPRESEARCH_SESSION_SECONDS) whose random id goes into an HttpOnly, SameSite=Strict cookie -
    `__Host-`-prefixed and Secure over HTTPS. The token itself is in no cookie, URL or script-readable
    storage."""
    tokens: Tokens = request.app.state.tokens
    principal = await tokens.authenticate(body.token)
    if principal is None:
        raise unauthorised("the API token is unknown or revoked")
    lifetime = request.app.state.settings.session_seconds
    session_id = await tokens.start_session(principal, lifetime)
    response = Response(
        (await _session(request, service, principal)).model_dump_json(), media_type="application/json"
    )
    response.set_cookie(
        session_cookie_name(request),
        session_id,
        max_age=lifetime,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    response.delete_cookie(_TOKEN_COOKIE, path="/api", httponly=True, samesite="strict")
    return response


@session.delete("", status_code=204, response_class=Response, responses=error_responses(403))
async def delete_session(request: Request) -> Response:
    """Sign out: the session is revoked on the server (its cookie is refused from now on, wherever a copy
    of it is) and the browser told to forget it. Needs no credentials (without a session there is nothing
    to end): the cookie is read here, not declared as the route's security."""
    session_id = await session_cookie(request, request.cookies.get(SESSION_COOKIE))
    if session_id:
        await request.app.state.tokens.end_session(session_id)
    response = Response(status_code=204)
    name = session_cookie_name(request)
    response.delete_cookie(name, path="/", httponly=True, samesite="strict", secure=name != SESSION_COOKIE)
    response.delete_cookie(_TOKEN_COOKIE, path="/api", httponly=True, samesite="strict")
    return response


collections = APIRouter(
    prefix="/api/collections",
    tags=["collections"],
    dependencies=[Depends(request_principal)],
    responses=error_responses(401),
)


@collections.get("", response_model=CollectionsPublic)
async def list_collections(service: ServiceDep, principal: PrincipalDep) -> CollectionsPublic:
    """The collections a run of yours may search: the server's and your uploaded ones."""
    collections, storage = await asyncio.to_thread(
        lambda: (service.collections.offered(principal), service.collections.storage(principal))
    )
    return CollectionsPublic(collections=collections, storage=storage)


@collections.get("/{name}/documents", response_model=DocumentsPublic, responses=error_responses(404, 422))
async def list_documents(
    name: CollectionName, service: ServiceDep, principal: PrincipalDep
) -> DocumentsPublic:
    """The documents of one of your uploaded collections."""
    documents = await asyncio.to_thread(service.collections.documents, principal, name)
    return DocumentsPublic(collection=name, documents=documents)


_UPLOAD_TYPES = sorted({t for types in MEDIA_TYPES.values() for t in types})


@collections.put(
    "/{name}/documents/{file_name}",
    status_code=201,
    response_model=DocumentPublic,
    responses=error_responses(403, 413, 415, 422, 429),
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "The document's bytes (not multipart), with its media type.",
            "content": {
                media_type: {"schema": {"type": "string", "format": "binary"}} for media_type in _UPLOAD_TYPES
            },
        }
    },
)
async def put_document(
    name: CollectionName, file_name: FileName, request: Request, service: ServiceDep, principal: PrincipalDep
) -> DocumentPublic:
    """Upload (or replace) a document in your collection `name`, created on first use; the next run that
    searches it indexes what changed."""
    body = await request.body()
    media_type = request.headers.get("content-type", "")
    return await service.collections.upload(principal, name, file_name, body, media_type, service.engine.cpu)


@collections.delete(
    "/{name}/documents/{file_name}",
    status_code=204,
    response_class=Response,
    responses=error_responses(403, 404, 422),
)
async def delete_document(
    name: CollectionName, file_name: FileName, service: ServiceDep, principal: PrincipalDep
) -> Response:
    """Delete a document of yours (the collection goes with its last document)."""
    await asyncio.to_thread(service.collections.delete, principal, name, file_name)
    return Response(status_code=204)
