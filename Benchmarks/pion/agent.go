package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v3"
	"github.com/pion/webrtc/v3/pkg/media"
	"github.com/pion/webrtc/v3/pkg/media/ivfwriter"
	"github.com/pion/webrtc/v3/pkg/media/oggwriter"
	"golang.org/x/net/websocket"
)

// agentCalls counts the bots' calls for the status line, as `bench-call cost-agents` does.
var agentCalls struct {
	connected, recording int64
}

// runAgents logs N bots in, prints "ready", then the status line once a second, forever (the
// parent stops the process).
func runAgents(base string, bots, first int, record bool, dir string) {
	var ready sync.WaitGroup
	for index := 0; index < bots; index++ {
		ready.Add(1)
		go func(number int) {
			if err := runBot(base, fmt.Sprintf("Pion %d", number), record, dir, &ready); err != nil {
				fail("bot %d: %v", number, err)
			}
		}(first + index)
	}
	ready.Wait()
	emit("ready")
	for range time.Tick(time.Second) {
		emit("connected %d recording %d loop-ms -", atomic.LoadInt64(&agentCalls.connected), atomic.LoadInt64(&agentCalls.recording))
	}
}

type agentEvent struct {
	Type   string `json:"type"`
	RtcID  string `json:"rtcId"`
	State  string `json:"state"`
	Reason string `json:"reason"`
	Code   string `json:"code"`
}

// runBot is one agent (docs/protocol.md §3): login, the agent socket, ready on the default queue,
// accept every offer, join each connected call's room.
func runBot(base, name string, record bool, dir string, ready *sync.WaitGroup) error {
	var login struct {
		AgentID string `json:"agentId"`
		Token   string `json:"token"`
	}
	if err := postJSON(base+"/agent/api/Login", "", map[string]string{"name": name, "secret": ""}, &login); err != nil {
		return err
	}
	socket, err := dialWebSocket(webSocketURL(base, "/agent/socket", url.Values{"agentId": {login.AgentID}, "token": {login.Token}}))
	if err != nil {
		return err
	}
	var sendLock sync.Mutex
	command := func(fields map[string]interface{}) {
		text, _ := json.Marshal(fields)
		sendLock.Lock()
		defer sendLock.Unlock()
		_ = websocket.Message.Send(socket, string(text)) // a lost socket ends the process below
	}
	command(map[string]interface{}{"type": "ready", "queues": []string{"default"}, "requestId": "ready"})
	calls := map[string]*agentCall{}
	signalledReady := false
	for {
		var frame string
		if err := websocket.Message.Receive(socket, &frame); err != nil {
			return fmt.Errorf("agent socket: %v", err)
		}
		var event agentEvent
		if json.Unmarshal([]byte(frame), &event) != nil {
			continue
		}
		switch event.Type {
		case "agent_state":
			if event.State == "ready" && !signalledReady {
				signalledReady = true
				ready.Done()
			}
		case "offer":
			command(map[string]interface{}{"type": "accept", "rtcId": event.RtcID})
		case "call_connected":
			call := &agentCall{rtcID: event.RtcID, record: record, dir: dir}
			calls[event.RtcID] = call
			go call.start(base, login.Token)
		case "call_ended":
			if call := calls[event.RtcID]; call != nil {
				delete(calls, event.RtcID)
				go call.end()
			}
			emit("event %s ended %s", event.RtcID, event.Reason)
		case "error":
			emit("event - error %s", event.Code)
		}
	}
}

// agentCall is one bot's call: its room, and its recording or its dropped media.
type agentCall struct {
	rtcID, dir string
	record     bool
	lock       sync.Mutex
	room       *roomCall
	writers    []media.Writer
	tracks     int
	connected  bool
	recording  bool
	ended      bool
}

func (call *agentCall) start(base, token string) {
	room, err := startRoomCall(base, call.rtcID, token, func(peer *webrtc.PeerConnection) error {
		// The bot only receives: the caller's video and audio.
		for _, kind := range []webrtc.RTPCodecType{webrtc.RTPCodecTypeVideo, webrtc.RTPCodecTypeAudio} {
			if _, err := peer.AddTransceiverFromKind(kind, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionRecvonly}); err != nil {
				return err
			}
		}
		peer.OnTrack(call.receive)
		peer.OnConnectionStateChange(call.stateChanged)
		return nil
	})
	if err != nil {
		emit("event %s failed %v", call.rtcID, strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	call.lock.Lock()
	defer call.lock.Unlock()
	if call.ended {
		room.close()
		return
	}
	call.room = room
}

func (call *agentCall) stateChanged(state webrtc.PeerConnectionState) {
	call.lock.Lock()
	defer call.lock.Unlock()
	switch state {
	case webrtc.PeerConnectionStateConnected:
		if !call.connected {
			call.connected = true
			atomic.AddInt64(&agentCalls.connected, 1)
		}
	case webrtc.PeerConnectionStateDisconnected, webrtc.PeerConnectionStateFailed, webrtc.PeerConnectionStateClosed:
		if call.connected {
			call.connected = false
			atomic.AddInt64(&agentCalls.connected, -1)
			if state != webrtc.PeerConnectionStateClosed {
				emit("event %s disconnected", call.rtcID)
			}
		}
	}
}

// receive reads one remote track until it ends: into Pion's IVF or Ogg writer when recording
// (the save-to-disk example's way), else dropped. RTCP from the far end is read too, so the
// interceptors see it.
func (call *agentCall) receive(track *webrtc.TrackRemote, receiver *webrtc.RTPReceiver) {
	debug("%s: track %s", call.rtcID, track.Kind())
	go func() {
		for {
			if _, _, err := receiver.ReadRTCP(); err != nil {
				return
			}
		}
	}()
	var writer media.Writer
	if call.record {
		var err error
		path := filepath.Join(call.dir, call.rtcID)
		if track.Kind() == webrtc.RTPCodecTypeVideo {
			writer, err = ivfwriter.New(path + ".ivf")
		} else {
			writer, err = oggwriter.New(path+".ogg", 48000, 2)
		}
		if err != nil {
			emit("event %s failed writer: %v", call.rtcID, err)
			return
		}
	}
	call.lock.Lock()
	if writer != nil {
		call.writers = append(call.writers, writer)
	}
	call.tracks++
	if call.record && call.tracks == 2 && !call.recording && !call.ended {
		call.recording = true
		atomic.AddInt64(&agentCalls.recording, 1)
	}
	room := call.room
	call.lock.Unlock()
	if track.Kind() == webrtc.RTPCodecTypeVideo && room != nil {
		// A recording starts at a key frame: ask for one now (the IVF writer waits for it).
		_ = room.peer.WriteRTCP([]rtcp.Packet{&rtcp.PictureLossIndication{MediaSSRC: uint32(track.SSRC())}})
	}
	buffer := make([]byte, 1500)
	for {
		if writer == nil {
			if _, _, err := track.Read(buffer); err != nil {
				return
			}
			continue
		}
		packet, _, err := track.ReadRTP()
		if err != nil {
			return
		}
		call.lock.Lock()
		if !call.ended {
			_ = writer.WriteRTP(packet) // a write error leaves a shorter file, as a full disk would
		}
		call.lock.Unlock()
	}
}

// end finishes the files first (the IVF header gets its frame count at close), and only then
// stops counting the call as recording: the parent stops the process once nothing records.
func (call *agentCall) end() {
	call.lock.Lock()
	call.ended = true
	room := call.room
	writers := call.writers
	call.writers = nil
	call.lock.Unlock()
	for _, writer := range writers {
		_ = writer.Close()
	}
	call.lock.Lock()
	if call.recording {
		call.recording = false
		atomic.AddInt64(&agentCalls.recording, -1)
	}
	call.lock.Unlock()
	if room != nil {
		room.close()
	}
}
