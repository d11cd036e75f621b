#!/usr/bin/env python3
"""A peerjs 1.5.1 peer (PyPI `peerjs`, the older Python port of the PeerJS client on aiortc) on a
PeerJS server, for what the port supports: data connections, answered, or opened with `--call
PEER` (`Peer.connect`, JSON serialization). No media: the port has no MediaConnection (no
`Peer.call`; a media OFFER is ignored, `pass` where PeerJS creates the call). Its first frame is
the typeless `{"ping":"once"}`; it sends JSON in text frames (as PeerJS <= 1.4 does) and closes a
connection by closing its RTCPeerConnection (as every PeerJS version does).

It echoes each text as "echo: TEXT" (the caller says "hello from peerjs151" first); the text
`hang up` makes it close that connection the port's way (`DataConnection.close()`). Prints ONE
JSON line on stdout (ok, opened, received, sent, closed, errors) once a connection closed, from
either side (or 5 s after PeerJS's close notice came without the close event), or `--timeout` passed; then waits for stdin to close and destroys the peer. Progress
on stderr (`open`, `connection PEER`, `data TEXT`, `closing`, `closed`). Exit 0 when a connection
carried texts and closed.

Shims for current aiortc, pyee and websockets (the port was written for aiortc 1.0 and pins av 8,
which no longer builds; it is installed with --no-deps):
- pyee 13 keeps `AsyncIOEventEmitter` in `pyee.asyncio`; the port imports it from `pyee`.
- Python 3.11 refuses its RTCConfiguration as a dataclass default: the default goes, the peer passes one.
- `Socket._wsOpen` reads websockets' `.open`, gone in websockets 14+: the protocol state is read instead.
The port's offering side never worked (it is untested upstream), so `--call` needs three more:
- `Peer.connect` hands its options positionally to `DataConnection(peerId, provider, **options)`
  (TypeError): the shim passes them by keyword, and registers the connection before it offers.
- `Negotiator._makeOffer` calls `createOffer(self.connection.options.constraints)` on a dict and
  puts the RTCSessionDescription and enums into the JSON it sends: the shim offers as the port's
  own `_makeAnswer` answers (`object_to_dict` of the local description, with its candidates).
- `DataConnection.handleMessage` reads the ANSWER's `payload.sdp` of a dict: the shim reads `["sdp"]`.
"""
import argparse
import asyncio
import json
import logging
import sys
import time

import pyee
from aiortc import RTCConfiguration
from pyee.asyncio import AsyncIOEventEmitter

# pyee 13 (aiortc 1.16's) keeps AsyncIOEventEmitter in pyee.asyncio; the port imports it from pyee.
pyee.AsyncIOEventEmitter = AsyncIOEventEmitter
# Python 3.11 refuses an unhashable dataclass default (the port's `PeerOptions.config` is an
# RTCConfiguration); every peer here passes its own configuration.
from peerjs import util as peerjs_util  # noqa: E402
peerjs_util.util.defaultConfig = None

from peerjs import peer as peerjs_peer  # noqa: E402 (after the shim above)
from peerjs import socket as peerjs_socket  # noqa: E402
from peerjs.dataconnection import DataConnection  # noqa: E402
from peerjs.enums import ConnectionEventType, PeerEventType, ServerMessageType  # noqa: E402
from peerjs.negotiator import Negotiator, object_to_dict  # noqa: E402


def progress(text):
    print(text, file=sys.stderr, flush=True)


def shim():
    """What current websockets and aiortc need of the 2021 port (see the module doc)."""
    def ws_open(self):
        websocket = self._websocket
        if websocket is None:
            return False
        state = getattr(websocket, "state", None)
        return getattr(state, "name", "") == "OPEN" if state is not None else bool(getattr(websocket, "open", False))
    peerjs_socket.Socket._wsOpen = ws_open
    shim_offering()


def shim_offering():
    """The port's offering side, fixed where it cannot run (see the module doc); the rest is the port's."""
    async def connect(self, peer, options=None):
        connection = DataConnection(peer, self, **(options or {}))
        self._addConnection(peer, connection)
        await connection._negotiator.startConnection(originator=True, reliable=connection.reliable)
        return connection

    async def make_offer(self):
        connection = self.connection
        pc = connection.peerConnection
        await pc.setLocalDescription(await pc.createOffer())
        payload = {"sdp": object_to_dict(pc.localDescription), "type": connection.type.value, "connectionId": connection.connectionId,
                   "metadata": connection.metadata, "browser": "peerjs-python", "label": connection.label,
                   "reliable": connection.reliable, "serialization": connection.serialization}
        await connection.provider.socket.send({"type": ServerMessageType.Offer.value, "payload": payload, "dst": connection.peer})

    handle_message = DataConnection.handleMessage

    async def handle_answer(self, message):
        if message.type == ServerMessageType.Answer:
            await self._negotiator.handleSDP(message.type, message.payload["sdp"])
        else:
            await handle_message(self, message)

    peerjs_peer.Peer.connect = connect
    Negotiator._makeOffer = make_offer
    DataConnection.handleMessage = handle_answer


async def run(args):
    shim()
    result = {"ok": False, "opened": False, "received": [], "sent": [], "closed": [], "errors": []}
    options = peerjs_peer.PeerOptions(host=args.host, port=args.port, path=args.path, key=args.key, secure=False,
                                      token="t" + str(int(time.time() * 1000) % 10**9), config=RTCConfiguration(iceServers=[]))
    peer = peerjs_peer.Peer(id=args.id, peer_options=options)
    opened = asyncio.Event()
    closed = asyncio.Event()
    notice = asyncio.Event()

    @peer.on(PeerEventType.Open)
    async def on_open(*_):
        result["opened"] = True
        opened.set()

    @peer.on(PeerEventType.Error)
    async def on_error(error):
        result["errors"].append(str(error))

    def watch(connection):
        @connection.on(ConnectionEventType.Data)
        async def on_data(data):
            if isinstance(data, dict) and "__peerData" in data:
                # PeerJS's in-band close notice: the port hands it over as data (PeerJS 1.5 closes on
                # it); the port's close event waits for the channel's close.
                result["received"].append("<close notice>")
                notice.set()
                return
            text = data if isinstance(data, str) else data.decode("utf-8", "replace") if isinstance(data, bytes) else json.dumps(data)
            result["received"].append(text)
            progress("data " + text[:80])
            if text == "hang up":
                progress("closing")
                result["closed"].append("local")
                closed.set()
                await connection.close()
            elif not text.startswith("echo: "):
                reply = "echo: " + text
                await connection.send(reply)
                result["sent"].append(reply)

        @connection.on(ConnectionEventType.Close)
        async def on_close():
            if not closed.is_set():
                result["closed"].append("remote")
                closed.set()
            progress("closed")

    @peer.on(PeerEventType.Connection)
    async def on_connection(connection):
        progress("connection " + connection.peer)
        watch(connection)

    await peer.start()
    await asyncio.wait_for(opened.wait(), args.timeout)
    progress("open")
    if args.call:
        connection = await peer.connect(args.call, {"serialization": "json", "reliable": True})
        watch(connection)

        @connection.on(ConnectionEventType.Open)
        async def on_open_connection():
            hello = "hello from peerjs151"
            await connection.send(hello)
            result["sent"].append(hello)
    async def closed_or_told():
        """The close event, or the close notice and at most 5 s more for the close event."""
        waits = {asyncio.ensure_future(closed.wait()), asyncio.ensure_future(notice.wait())}
        _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for wait in pending:
            wait.cancel()
        if not closed.is_set():
            try:
                await asyncio.wait_for(closed.wait(), 5)
            except asyncio.TimeoutError:
                result["errors"].append("no close event within 5 s of the close notice")

    try:
        await asyncio.wait_for(closed_or_told(), args.timeout)
        result["ok"] = len(result["received"]) > 0
    except asyncio.TimeoutError:
        result["errors"].append("no connection closed within %s s" % args.timeout)
    print(json.dumps(result), flush=True)
    # The caller reads the summary, then closes stdin: the peer leaves.
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    try:
        await asyncio.wait_for(peer.destroy(), 5)
    except Exception as error:  # the summary is out; a failing teardown changes nothing in it
        progress("destroy: %s" % error)
    return 0 if result["ok"] else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/peerjs")
    parser.add_argument("--key", default="peerjs")
    parser.add_argument("--id", required=True)
    parser.add_argument("--call", help="open a data connection (JSON) to this peer; else answer")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--debug", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.CRITICAL, stream=sys.stderr)
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
