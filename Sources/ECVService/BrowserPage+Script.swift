extension BrowserPage {
    /// The page's script: AppRTC signaling (docs/protocol.md §2), the caller's side of the text-channel
    /// commands (§4), Hangup over REST (§1.4), and the `window.ecvTest` hooks the interop tests drive:
    /// `state()`, `stats()` (a Promise, from `getStats`), `frames()` (with `?watch=frames`), `send(text)`,
    /// `mute(kind, muted)`, `hangup()`.
    /// Every text from outside reaches the page through `textContent`, never as HTML.
    static let script = #"""
    (() => {
      'use strict';
      const settings = JSON.parse(document.getElementById('ecv-settings').textContent);
      const query = new URLSearchParams((window.location && window.location.search) || '');
      const role = query.get('role') === 'agent' ? 'agent' : 'caller';
      const codec = (query.get('codec') || '').toUpperCase();
      const label = query.get('label') || settings.dataChannelLabel;
      // `?video=WxH`: the camera size asked for (16–1920 each way; anything else means 640×480).
      const videoSize = (() => {
        const match = /^([0-9]{2,4})x([0-9]{2,4})$/.exec(query.get('video') || '');
        const ok = match && [match[1], match[2]].every((v) => Number(v) >= 16 && Number(v) <= 1920);
        return ok ? { width: Number(match[1]), height: Number(match[2]) } : { width: 640, height: 480 };
      })();
      // `?audio=raw`: the microphone without the browser's echo cancellation, noise suppression and
      // gain control (a test signal such as a 1 kHz beep comes through as it is, not as noise).
      const audioConstraints = query.get('audio') === 'raw'
        ? { echoCancellation: false, noiseSuppression: false, autoGainControl: false } : true;
      const $ = (id) => document.getElementById(id);
      const log = (text) => {
        const item = document.createElement('li');
        item.textContent = new Date().toLocaleTimeString() + '  ' + text;
        $('log').prepend(item);
      };
      const status = (text) => { $('status').textContent = text; };

      // The call credential (optional `?token=`, docs/protocol.md §1.9): the one place it is attached to
      // what the page sends, as the `X-ECV-Token` header where one can be set and as `token=` in the URL
      // where none can (the WebSocket, beacons).
      const credentials = {
        token: query.get('token'),
        headers(headers = {}) { return this.token ? { ...headers, 'X-ECV-Token': this.token } : headers; },
        url(url) { return this.token ? url + (url.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(this.token) : url; },
      };

      let pc = null, socket = null, registered = false, clientId = null, channel = null, localStream = null;
      let remoteDescriptionSet = false, ended = false, onHold = false, initiator = false, joinedAt = null;
      const userMuted = { audio: false, video: false };
      const received = [], sent = [];
      const earlyCandidates = [];
      let outgoing = Promise.resolve();
      let incoming = Promise.resolve();

      // Payloads go out in order: over HTTP until our socket registered, then on the socket.
      function send(payload) {
        const text = JSON.stringify(payload);
        outgoing = outgoing.then(async () => {
          if (registered && socket && socket.readyState === WebSocket.OPEN) {
            socket.send(JSON.stringify({ cmd: 'send', msg: text }));
            return;
          }
          const reply = await fetch(settings.messageUrl + encodeURIComponent(clientId), { method: 'POST', body: text, headers: credentials.headers() });
          const answer = await reply.json();
          if (answer.result !== 'SUCCESS') log('posting ' + payload.type + ' failed: ' + answer.result);
        }).catch((error) => log('sending ' + payload.type + ' failed: ' + error));
      }

      // Payloads are handled strictly one after another (an answer must not overtake its offer).
      function receive(payload) {
        incoming = incoming.then(() => handle(payload)).catch((error) => log('handling ' + payload.type + ' failed: ' + error));
      }

      async function flushCandidates() {
        remoteDescriptionSet = true;
        for (const candidate of earlyCandidates.splice(0)) await pc.addIceCandidate(candidate);
      }

      // `?codec=` first among the video codecs (with its retransmission format); the rest after it,
      // or with `?only=1` nothing else but retransmission (a browser that must not fall back).
      function preferCodec() {
        if (!codec || typeof RTCRtpReceiver === 'undefined' || !RTCRtpReceiver.getCapabilities || !pc.getTransceivers) return;
        const codecs = RTCRtpReceiver.getCapabilities('video').codecs;
        const wanted = codecs.filter((c) => c.mimeType.toUpperCase() === 'VIDEO/' + codec);
        if (wanted.length === 0) { log('this browser cannot receive ' + codec); return; }
        const only = query.get('only') === '1';
        const others = codecs.filter((c) => !wanted.includes(c) && (!only || c.mimeType.toUpperCase() === 'VIDEO/RTX'));
        for (const transceiver of pc.getTransceivers()) {
          const kind = (transceiver.receiver && transceiver.receiver.track && transceiver.receiver.track.kind) || '';
          if (kind === 'video' && transceiver.setCodecPreferences) transceiver.setCodecPreferences([...wanted, ...others]);
        }
      }

      async function handle(message) {
        if (ended) return;
        switch (message.type) {
          case 'offer': {
            await pc.setRemoteDescription({ type: 'offer', sdp: message.sdp });
            await flushCandidates();
            preferCodec();
            const answer = await pc.createAnswer();
            await pc.setLocalDescription(answer);
            send({ type: 'answer', sdp: answer.sdp });
            log('received the offer, sent an answer');
            break;
          }
          case 'answer':
            await pc.setRemoteDescription({ type: 'answer', sdp: message.sdp });
            await flushCandidates();
            log('received the answer');
            break;
          case 'candidate': {
            const candidate = { candidate: message.candidate, sdpMid: message.id, sdpMLineIndex: message.label };
            if (remoteDescriptionSet) await pc.addIceCandidate(candidate); else earlyCandidates.push(candidate);
            break;
          }
          case 'bye':
            log('the other side left');
            end('The call ended.', false);
            break;
          default:
            log('ignored a ' + message.type + ' payload');
        }
      }

      // MARK: the text channel (docs/protocol.md §4)

      function sendText(text) {
        if (!channel || channel.readyState !== 'open') return false;
        channel.send(text);
        sent.push(text);
        log('you: ' + text);
        return true;
      }

      // A track is live when neither the user muted it nor the call is on hold.
      function applyTrackStates() {
        if (!localStream) return;
        for (const track of localStream.getTracks()) track.enabled = !onHold && !userMuted[track.kind];
      }

      function setHold(held) {
        onHold = held;
        $('hold').className = held ? 'shown' : '';
        applyTrackStates();
        log(held ? 'on hold' : 'picked up');
      }

      // The caller's side of an agent's command: hold, pickup, and flash requests (no torch here).
      function obey(text) {
        const fields = text.trim().split('|').map((field) => field.trim());
        const keyword = fields[0].toUpperCase();
        const rtcId = fields[1] || '';
        const forThisCall = rtcId === '' || rtcId === settings.roomId;
        if (keyword === 'HOLD' && forThisCall) setHold(true);
        else if (keyword === 'PICKUP' && forThisCall) setHold(false);
        else if (keyword === 'FLASH_ON' || keyword === 'FLASH_OFF') {
          const reply = ['ACCEPTED', 'REFUSED', 'UNAVAILABLE'].includes(rtcId.toUpperCase());
          if (!reply) sendText(keyword + '|UNAVAILABLE');
        }
      }

      function useChannel(dataChannel) {
        channel = dataChannel;
        channel.onopen = () => { $('text').disabled = false; $('send').disabled = false; log('text channel ' + channel.label + ' open'); };
        channel.onclose = () => { $('text').disabled = true; $('send').disabled = true; log('text channel closed'); };
        channel.onmessage = (event) => {
          const text = String(event.data);
          received.push(text);
          log('peer: ' + text);
          if (role === 'caller') obey(text);
        };
      }

      function mute(kind, muted) {
        if (kind !== 'audio' && kind !== 'video') return false;
        userMuted[kind] = muted;
        applyTrackStates();
        $('mute-' + kind).textContent = kind === 'audio' ? (muted ? 'Unmute microphone' : 'Mute microphone')
                                                        : (muted ? 'Start camera' : 'Stop camera');
        return sendText('STATUS|' + kind.toUpperCase() + '|' + (muted ? 'MUTED' : 'UNMUTED') + '|' + settings.roomId);
      }

      // MARK: signaling and the end of the call

      function openSocket(url) {
        socket = new WebSocket(credentials.url(url));
        socket.onopen = () => {
          socket.send(JSON.stringify({ cmd: 'register', roomid: settings.roomId, clientid: clientId }));
          registered = true;
          log('registered with the signaling server');
        };
        socket.onmessage = (event) => {
          const delivery = JSON.parse(event.data);
          if (delivery.error) { log('signaling error: ' + delivery.error); return; }
          if (delivery.msg) receive(JSON.parse(delivery.msg));
        };
        socket.onclose = (event) => { registered = false; log('signaling socket closed (' + event.code + ')'); };
      }

      function end(reason, tellPeer) {
        if (ended) return;
        ended = true;
        if (clientId) {
          if (tellPeer) {
            const bye = JSON.stringify({ type: 'bye' });
            if (registered && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ cmd: 'send', msg: bye }));
            else navigator.sendBeacon(credentials.url(settings.messageUrl + encodeURIComponent(clientId)), bye);
          }
          navigator.sendBeacon(credentials.url(settings.leaveUrl + encodeURIComponent(clientId)));
        }
        if (socket) socket.close();
        if (pc) pc.close();
        if (localStream) localStream.getTracks().forEach((track) => track.stop());
        $('hangup').disabled = true;
        status(reason);
      }

      // A caller ends the ECV call through REST (the service then closes the room); an agent-side
      // page only leaves the room: its agent hangs up on the agent socket.
      async function hangup() {
        if (ended) return null;
        let result = null;
        if (role === 'caller') {
          try {
            const reply = await fetch(settings.hangupUrl, {
              method: 'POST', headers: credentials.headers({ 'Content-Type': 'application/json' }),
              body: JSON.stringify({ rtcId: settings.roomId, reason: 'LOCAL_HANGUP' }) });
            result = reply.status;
            log('hangup answered ' + reply.status);
          } catch (error) { log('hangup failed: ' + error); }
        }
        end('You hung up.', true);
        return result;
      }

      async function main() {
        status('joining room ' + settings.roomId + '…');
        const reply = await (await fetch(settings.joinUrl, { method: 'POST', headers: credentials.headers() })).json();
        if (reply.result !== 'SUCCESS') { status('Cannot join room ' + settings.roomId + ': ' + reply.result); return; }
        const params = reply.params;
        clientId = params.client_id;
        initiator = params.is_initiator === true || params.is_initiator === 'true';
        joinedAt = Date.now();
        log('joined as client ' + clientId + (initiator ? ' (initiator)' : ''));

        pc = new RTCPeerConnection(JSON.parse(params.pc_config));
        pc.onicecandidate = (event) => {
          if (event.candidate && event.candidate.candidate) {
            send({ type: 'candidate', label: event.candidate.sdpMLineIndex, id: event.candidate.sdpMid,
                   candidate: event.candidate.candidate });
          }
        };
        pc.ontrack = (event) => {
          $('remote').srcObject = event.streams[0] || new MediaStream([event.track]);
          if (event.track && event.track.kind === 'video' && event.receiver) watchFrames(event.receiver);
        };
        pc.ondatachannel = (event) => useChannel(event.channel);
        pc.onconnectionstatechange = () => { log('connection ' + pc.connectionState); if (pc.connectionState === 'connected') status('In call.'); };

        try {
          localStream = await navigator.mediaDevices.getUserMedia({ audio: audioConstraints, video: { ...videoSize, frameRate: 30 } });
          $('local').srcObject = localStream;
          // Keep the picture's size when the browser is short of CPU or bandwidth (it lowers the
          // frame rate instead): an agent reads documents held to the camera, and a recording
          // cannot change its video size mid-file.
          localStream.getVideoTracks().forEach((track) => { track.contentHint = 'detail'; });
          localStream.getTracks().forEach((track) => pc.addTrack(track, localStream));
        } catch (error) {
          log('no camera or microphone (' + error.name + '): receiving only');
          if (initiator) {
            pc.addTransceiver('audio', { direction: 'recvonly' });
            pc.addTransceiver('video', { direction: 'recvonly' });
          }
        }

        openSocket(params.wss_url || settings.signalingUrl);
        if (initiator) {
          useChannel(pc.createDataChannel(label));
          preferCodec();
          const offer = await pc.createOffer();
          await pc.setLocalDescription(offer);
          send({ type: 'offer', sdp: offer.sdp });
          status('Waiting for the other side…');
        } else {
          for (const text of params.messages || []) receive(JSON.parse(text));
          status('Connecting…');
        }
      }

      // MARK: test hooks

      async function stats() {
        const result = { video: { inbound: {}, outbound: {} }, audio: { inbound: {}, outbound: {} } };
        if (!pc) return result;
        const reports = await pc.getStats();
        const codecs = {};
        reports.forEach((report) => { if (report.type === 'codec') codecs[report.id] = report.mimeType; });
        reports.forEach((report) => {
          if ((report.type !== 'inbound-rtp' && report.type !== 'outbound-rtp') || !result[report.kind]) return;
          const direction = report.type === 'inbound-rtp' ? 'inbound' : 'outbound';
          const entry = result[report.kind][direction];
          const counters = direction === 'inbound'
            ? ['framesDecoded', 'framesReceived', 'packetsReceived', 'bytesReceived', 'pliCount', 'firCount', 'nackCount',
               'freezeCount', 'totalFreezesDuration']
            : ['framesEncoded', 'framesSent', 'packetsSent', 'bytesSent', 'pliCount', 'firCount', 'nackCount',
               'retransmittedPacketsSent', 'targetBitrate'];
          for (const name of counters) if (typeof report[name] === 'number') entry[name] = (entry[name] || 0) + report[name];
          if (report.codecId && codecs[report.codecId]) entry.mimeType = codecs[report.codecId];
          // Why a sender sends less than it could (bandwidth, cpu, none): the first thing to read
          // when a browser's video stops reaching ECVKit.
          if (typeof report.qualityLimitationReason === 'string') entry.qualityLimitationReason = report.qualityLimitationReason;
        });
        reports.forEach((report) => {
          if (report.type !== 'candidate-pair' || !report.nominated) return;
          result.transport = { availableOutgoingBitrate: report.availableOutgoingBitrate, currentRoundTripTime: report.currentRoundTripTime,
                               packetsSent: report.packetsSent, packetsReceived: report.packetsReceived };
        });
        return result;
      }

      // `?watch=keyframes`: when the other side asked for key frames (PLI/FIR counted by our video
      // sender), in wall-clock milliseconds, sampled every 100 ms, so a test can line them up with
      // its own clock.
      const keyframeRequests = [];
      if (query.get('watch') === 'keyframes') {
        let last = 0;
        const sample = setInterval(async () => {
          if (ended) { clearInterval(sample); return; }
          const video = (await stats()).video.outbound;
          const count = (video.pliCount || 0) + (video.firCount || 0);
          if (count > last) keyframeRequests.push({ at: Date.now(), pli: video.pliCount || 0, fir: video.firCount || 0 });
          last = count;
        }, 100);
      }

      // `?watch=frames`: the remote video's `framesDecoded`, sampled every 50 ms as [wall-clock ms,
      // count] pairs (at most 30 minutes of them), so a benchmark can find the freezes on its own
      // clock and count the frames in its own window.
      const frameSamples = [];
      let watchingFrames = false;
      function watchFrames(receiver) {
        if (query.get('watch') !== 'frames' || watchingFrames) return;
        watchingFrames = true;
        const sample = setInterval(async () => {
          if (ended || frameSamples.length >= 36000) { clearInterval(sample); return; }
          const reports = await receiver.getStats();
          reports.forEach((report) => {
            if (report.type === 'inbound-rtp' && typeof report.framesDecoded === 'number') frameSamples.push([Date.now(), report.framesDecoded]);
          });
        }, 50);
      }

      // The SDP lines that say what was negotiated (for test reports): no candidates, no keys.
      function sdpDigest(description) {
        const keep = ['m=', 'a=rtpmap', 'a=fmtp', 'a=sendrecv', 'a=sendonly', 'a=recvonly', 'a=inactive', 'a=setup', 'a=fingerprint'];
        return description ? description.sdp.split('\r\n').filter((line) => keep.some((prefix) => line.startsWith(prefix))) : [];
      }

      window.ecvTest = {
        state: () => ({
          role, codec, clientId, initiator, ended, onHold,
          connectionState: pc ? pc.connectionState : 'new',
          iceConnectionState: pc ? pc.iceConnectionState : 'new',
          channel: channel ? { label: channel.label, state: channel.readyState } : null,
          received: received.slice(), sent: sent.slice(), muted: { ...userMuted },
          status: $('status').textContent,
          sdp: { local: sdpDigest(pc && pc.localDescription), remote: sdpDigest(pc && pc.remoteDescription) },
          keyframeRequests: keyframeRequests.slice(),
          joinedAt,
        }),
        frames: () => (query.get('watch') === 'frames' ? frameSamples.slice() : null),
        stats,
        send: sendText,
        mute,
        hangup,
      };

      $('chat').addEventListener('submit', (event) => {
        event.preventDefault();
        if (sendText($('text').value)) $('text').value = '';
      });
      $('mute-audio').addEventListener('click', () => mute('audio', !userMuted.audio));
      $('mute-video').addEventListener('click', () => mute('video', !userMuted.video));
      $('hangup').addEventListener('click', () => { hangup(); });
      window.addEventListener('pagehide', () => end('Left the page.', true));
      main().catch((error) => { status('Failed: ' + error); log(String(error)); });
    })();
    """#
}
