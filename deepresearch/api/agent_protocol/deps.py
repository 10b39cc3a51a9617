"""The protocol's request dependencies: the principal's Protocol, and the path's thread (404 when it is
another user's)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path

from deepresearch.api.access import PrincipalDep, ServiceDep
from deepresearch.api.agent_protocol.lifecycle import Protocol
from deepresearch.store.steering import ProtocolThread


async def protocol(service: ServiceDep, principal: PrincipalDep) -> Protocol:  # async: no thread hop
    return Protocol(service, principal)


ProtocolDep = Annotated[Protocol, Depends(protocol)]
ThreadId = Annotated[str, Path(max_length=128, description="The thread's id.")]


async def path_thread(thread_id: ThreadId, proto: ProtocolDep) -> ProtocolThread:
    return await proto.thread(thread_id)


ThreadDep = Annotated[ProtocolThread, Depends(path_thread)]
