/// `GET <path>/client`: a page with a minimal PeerJS-protocol client in plain JavaScript (no
/// PeerJS library) that behaves as the PeerJS library does where it matters to a peer: its first
/// frame is a typeless ping (as the Python port's), it closes a connection by closing its
/// RTCPeerConnection, it packs `binary` messages with BinaryPack and chunks those over 16 300
/// bytes, and it sends JSON in binary frames as PeerJS 1.5 does or in text frames as ≤ 1.4 does
/// (reading only that kind, as each does). It registers on this server, calls a peer or answers
/// calls with the browser's camera and microphone, and opens or takes a data connection, echoing
/// what it receives. Query: `key`, `id`, `call=<peer>` (else it answers), `duration` (seconds of
/// media: from the call, or from the first stream it answered), `serialization` (json, binary or
/// raw; json by default), `jsonframes` (binary or text), `big=N` (the caller also sends N
/// characters), `finish=dataclosed` (also done once every data connection closed). A data message `hang up` closes every connection with its sender, `finish`
/// ends the run. The page exposes `window.peerTest.summary()` for drivers
/// (Tests/Interop/peers/peerjs_page.py).
enum PeerClientPage {
    static let html = """
    <!doctype html>
    <html><head><meta charset="utf-8"><title>ECVKit peer page</title></head>
    <body><video id="remote" autoplay playsinline muted></video><pre id="log"></pre>
    <script>
    \(script)
    </script></body></html>
    """

    static let script = #"""
    "use strict";
    const query = new URLSearchParams(location.search);
    const key = query.get("key") || "peerjs", myId = query.get("id"), target = query.get("call");
    const duration = Number(query.get("duration") || "5") * 1000;
    const serialization = query.get("serialization") || "json", jsonFrames = query.get("jsonframes") || "binary";
    const big = Number(query.get("big") || "0"), finishWhenDataClosed = query.get("finish") === "dataclosed";
    const base = location.pathname.replace(/\/client$/, "");
    const result = { ok: false, id: myId, opened: false, calls: 0, streams: 0, framesDecoded: 0, framesSent: 0,
                     received: [], sent: [], errors: [], closed: [], log: [] };
    const connections = new Map();   // connectionId -> { pc, type, peer, pending: [] }
    let socket, iceServers = [], localStream, finished = false, mediaReady;
    const media = new Promise((resolve) => { mediaReady = resolve; });
    const log = (text) => { result.log.push(text); document.getElementById("log").textContent += text + "\n"; };
    const token = Math.random().toString(36).slice(2, 12);
    const send = (message) => socket.send(JSON.stringify(message));
    const random = () => Math.random().toString(36).slice(2, 12);

    function connection(id, type, peer) {
      const pc = new RTCPeerConnection({ iceServers });
      const entry = { pc, type, peer, pending: [], channel: null, serialization };
      connections.set(id, entry);
      pc.onicecandidate = (event) => {
        if (event.candidate && event.candidate.candidate) {
          send({ type: "CANDIDATE", dst: peer, payload: { candidate: event.candidate.toJSON(), type, connectionId: id } });
        }
      };
      pc.ontrack = (event) => {
        // PeerJS takes `event.streams[0]`: a track that came without a stream (no msid) would be lost to it.
        if (event.streams.length === 0) { result.errors.push("a " + event.track.kind + " track without a stream (no msid)"); }
        if (event.track.kind === "video") { document.getElementById("remote").srcObject = event.streams[0]; }
        if (!entry.streamed) {
          entry.streamed = true; result.streams += 1; log("stream from " + peer);
          if (!target && result.streams === 1) { setTimeout(finish, duration); }
        }
      };
      pc.ondatachannel = (event) => watchChannel(entry, event.channel);
      return entry;
    }

    // BinaryPack (peerjs-js-binarypack) for strings, bytes, small integers and maps: what PeerJS's messages use.
    const utf8 = new TextEncoder(), fromUtf8 = new TextDecoder("utf-8", { fatal: true }), chunkedMTU = 16300;
    const sized = (n, fix, b16, b32) => n <= 15 ? Uint8Array.of(fix | n) : n <= 0xffff ? Uint8Array.of(b16, n >> 8, n & 255)
      : Uint8Array.of(b32, n >>> 24, (n >> 16) & 255, (n >> 8) & 255, n & 255);
    function packInto(value, parts) {
      if (typeof value === "string") { const bytes = utf8.encode(value); parts.push(sized(bytes.length, 0xb0, 0xd8, 0xd9), bytes); }
      else if (value instanceof Uint8Array) { parts.push(sized(value.length, 0xa0, 0xda, 0xdb), value); }
      else if (typeof value === "number") { parts.push(value <= 0x7f ? Uint8Array.of(value) : value <= 0xff ? Uint8Array.of(0xcc, value) : Uint8Array.of(0xce, value >>> 24, (value >> 16) & 255, (value >> 8) & 255, value & 255)); }
      else { const keys = Object.keys(value); parts.push(Uint8Array.of(0x80 | keys.length)); for (const k of keys) { packInto(k, parts); packInto(value[k], parts); } }
    }
    function concat(parts) {
      const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
      let at = 0; for (const part of parts) { out.set(part, at); at += part.length; }
      return out;
    }
    const pack = (value) => { const parts = []; packInto(value, parts); return concat(parts); };
    function unpack(bytes) {
      let at = 0;
      const number = (k) => { let v = 0; for (let i = 0; i < k; i++) { v = v * 256 + bytes[at++]; } return v; };
      const raw = (n) => { if (at + n > bytes.length) { throw new Error("truncated"); } const r = bytes.slice(at, at + n); at += n; return r; };
      const map = (n) => { const o = {}; for (let i = 0; i < n; i++) { const k = value(); o[k] = value(); } return o; };
      function value() {
        const t = bytes[at++];
        if (t <= 0x7f) { return t; }
        if (t >= 0x80 && t <= 0x8f) { return map(t & 15); }
        if (t >= 0xa0 && t <= 0xaf) { return raw(t & 15); }
        if (t >= 0xb0 && t <= 0xbf) { return fromUtf8.decode(raw(t & 15)); }
        switch (t) {
          case 0xc0: return null;
          case 0xcc: return number(1); case 0xcd: return number(2); case 0xce: return number(4);
          case 0xd8: return fromUtf8.decode(raw(number(2))); case 0xd9: return fromUtf8.decode(raw(number(4)));
          case 0xda: return raw(number(2)); case 0xdb: return raw(number(4));
          case 0xde: return map(number(2));
          default: throw new Error("BinaryPack type " + t);
        }
      }
      const result = value();
      if (at !== bytes.length) { throw new Error("trailing bytes"); }
      return result;
    }
    let nextChunkId = 0;

    // One message out, as PeerJS writes it for the connection's serialization.
    function sendData(entry, value) {
      const channel = entry.channel;
      if (entry.serialization === "binary") {
        const packed = pack(value);
        if (packed.length <= chunkedMTU) { channel.send(packed); } else {
          const total = Math.ceil(packed.length / chunkedMTU), id = nextChunkId++;
          for (let n = 0; n < total; n++) { channel.send(pack({ __peerData: id, n, data: packed.slice(n * chunkedMTU, (n + 1) * chunkedMTU), total })); }
        }
      } else if (entry.serialization === "json") {
        const text = JSON.stringify(value);
        channel.send(jsonFrames === "text" ? text : utf8.encode(text));
      } else { channel.send(value); }
      result.sent.push(shown(value));
    }
    const shown = (value) => typeof value === "string" && value.length > 200 ? "<" + value.length + " chars>" : String(value);

    // One message in, read as PeerJS reads it; undefined for PeerJS's own (a chunk, the close notice).
    function readData(entry, data) {
      if (entry.serialization === "binary") {
        const value = unpack(new Uint8Array(data));
        if (value && typeof value === "object" && !(value instanceof Uint8Array) && value.__peerData !== undefined) {
          if (value.__peerData.type === "close") { closeConnection(entry, "notice"); return undefined; }
          const chunks = entry.chunks[value.__peerData] || (entry.chunks[value.__peerData] = { parts: [], count: 0 });
          chunks.parts[value.n] = value.data; chunks.count += 1;
          if (chunks.count < value.total) { return undefined; }
          delete entry.chunks[value.__peerData];
          return unpack(concat(chunks.parts));
        }
        return value instanceof Uint8Array ? fromUtf8.decode(value) : value;
      }
      if (entry.serialization === "json") {
        // PeerJS 1.5 decodes bytes (a text frame fails there); ≤ 1.4 parses the frame as it is (bytes fail there).
        const value = JSON.parse(jsonFrames === "text" ? data : fromUtf8.decode(new Uint8Array(data)));
        if (value && value.__peerData && value.__peerData.type === "close") { closeConnection(entry, "notice"); return undefined; }
        return value;
      }
      return typeof data === "string" ? data : fromUtf8.decode(new Uint8Array(data));
    }

    // PeerJS closes a connection by closing its RTCPeerConnection (Negotiator.cleanup), then the channel.
    function closeConnection(entry, why) {
      if (entry.pc.connectionState === "closed") { return; }
      entry.pc.close();
      if (entry.channel) { entry.channel.close(); }
      result.closed.push(why + ":" + entry.type + ":" + entry.peer);
      log("closed " + entry.type + " (" + why + ")");
      const data = [...connections.values()].filter((other) => other.type === "data");
      if (finishWhenDataClosed && data.every((other) => other.pc.connectionState === "closed")) { setTimeout(finish, 0); }
    }

    function watchChannel(entry, channel) {
      entry.channel = channel;
      entry.chunks = {};
      channel.binaryType = "arraybuffer";
      channel.onclose = () => closeConnection(entry, "channel");
      if (entry.type !== "data") {
        channel.onmessage = (event) => { if (event.data === "close") { closeConnection(entry, "notice"); } };
        return;
      }
      channel.onopen = () => {
        if (!target) { return; }
        sendData(entry, "hello from chromium");
        if (big > 0) { sendData(entry, "x".repeat(big)); }
      };
      channel.onmessage = (event) => {
        let value;
        try { value = readData(entry, event.data); } catch (error) { result.errors.push("data: " + error); return; }
        if (value === undefined) { return; }
        const text = String(value);
        result.received.push(shown(text));
        if (text === "hang up") { for (const other of connections.values()) { if (other.peer === entry.peer) { closeConnection(other, "hang up"); } } return; }
        if (text === "finish") { finish(); return; }
        if (!text.startsWith("echo: ")) { sendData(entry, "echo: " + text); }
      };
    }

    async function call(peer) {
      const id = "mc_" + random();
      const entry = connection(id, "media", peer);
      for (const track of localStream.getTracks()) { entry.pc.addTrack(track, localStream); }
      watchChannel(entry, entry.pc.createDataChannel(id));
      const offer = await entry.pc.createOffer();
      await entry.pc.setLocalDescription(offer);
      send({ type: "OFFER", dst: peer, payload: { sdp: offer, type: "media", connectionId: id, metadata: null, browser: "chromium" } });
      result.calls += 1;
      const dataId = "dc_" + random();
      const data = connection(dataId, "data", peer);
      watchChannel(data, data.pc.createDataChannel(dataId, { ordered: true }));
      const dataOffer = await data.pc.createOffer();
      await data.pc.setLocalDescription(dataOffer);
      send({ type: "OFFER", dst: peer, payload: { sdp: dataOffer, type: "data", connectionId: dataId, label: dataId,
                                                  reliable: true, serialization, browser: "chromium" } });
    }

    async function answer(message) {
      const payload = message.payload;
      await media;
      const entry = connection(payload.connectionId, payload.type, message.src);
      entry.serialization = payload.serialization || "binary";
      if (payload.type === "media") {
        result.calls += 1;
        for (const track of localStream.getTracks()) { entry.pc.addTrack(track, localStream); }
      }
      await entry.pc.setRemoteDescription(payload.sdp);
      const answer = await entry.pc.createAnswer();
      await entry.pc.setLocalDescription(answer);
      send({ type: "ANSWER", dst: message.src, payload: { sdp: answer, type: payload.type, connectionId: payload.connectionId, browser: "chromium" } });
      for (const candidate of entry.pending) { await entry.pc.addIceCandidate(candidate); }
      entry.pending = [];
    }

    async function onMessage(message) {
      switch (message.type) {
        case "OPEN":
          result.opened = true;
          iceServers = (message.payload && message.payload.iceServers) || [];
          log("open " + myId);
          localStream = await navigator.mediaDevices.getUserMedia({ video: { width: 320, height: 240 }, audio: true });
          mediaReady();
          setInterval(() => send({ type: "HEARTBEAT" }), 5000);
          if (target) { await call(target); }
          // Calling: `duration` from now; answering: `duration` after the first stream (at most a minute).
          setTimeout(finish, target ? duration : 60000);
          break;
        case "OFFER": await answer(message); break;
        case "ANSWER": await connections.get(message.payload.connectionId).pc.setRemoteDescription(message.payload.sdp); break;
        case "CANDIDATE": {
          await media;
          const entry = connections.get(message.payload.connectionId);
          if (!entry) { break; }
          if (entry.pc.remoteDescription) { await entry.pc.addIceCandidate(message.payload.candidate); } else { entry.pending.push(message.payload.candidate); }
          break;
        }
        case "LEAVE": for (const entry of connections.values()) { if (entry.peer === message.src) { entry.pc.close(); result.closed.push("leave:" + entry.peer); } } break;
        case "EXPIRE": result.errors.push("peer-unavailable " + message.src); break;
        default: result.errors.push(message.type + " " + JSON.stringify(message.payload || {})); break;
      }
    }

    async function measure() {
      for (const entry of connections.values()) {
        if (entry.type !== "media" || entry.pc.connectionState === "closed") { continue; }
        const stats = await entry.pc.getStats();
        stats.forEach((report) => {
          if (report.type === "inbound-rtp" && report.kind === "video") { result.framesDecoded = Math.max(result.framesDecoded, report.framesDecoded || 0); }
          if (report.type === "outbound-rtp" && report.kind === "video") { result.framesSent = Math.max(result.framesSent, report.framesEncoded || 0); }
        });
      }
    }

    async function finish() {
      if (finished) { return; }
      await measure();
      finished = true;
      // Hang up as a PeerJS page does: each RTCPeerConnection closes (its channels with it), the socket stays.
      for (const entry of connections.values()) { closeConnection(entry, "finish"); }
      result.ok = result.opened && result.streams > 0 && result.framesDecoded > 0;
      log("finished");
    }

    window.peerTest = { summary: () => result, done: () => finished, measure, finish };
    socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + base + "/peerjs?key=" +
                           encodeURIComponent(key) + "&id=" + encodeURIComponent(myId) + "&token=" + token);
    // The Python port's first frame, which peerjs-server ignores.
    socket.onopen = () => socket.send(JSON.stringify({ ping: "once" }));
    socket.onmessage = (event) => onMessage(JSON.parse(event.data)).catch((error) => result.errors.push(String(error)));
    socket.onclose = () => log("socket closed");
    setInterval(() => { if (!finished) { measure(); } }, 1000);
    """#
}
