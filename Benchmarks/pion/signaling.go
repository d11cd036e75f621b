package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/pion/ice/v2"
	"github.com/pion/interceptor"
	"github.com/pion/webrtc/v3"
	"golang.org/x/net/websocket"
)

// The service's answers are small; anything larger is refused rather than read.
const maximumBody = 1 << 20

var httpClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// postJSON sends body (nil: empty) with the call credential and decodes the answer into answer.
func postJSON(address, token string, body interface{}, answer interface{}) error {
	var payload io.Reader = http.NoBody
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			return err
		}
		payload = bytes.NewReader(encoded)
	}
	request, err := http.NewRequest(http.MethodPost, address, payload)
	if err != nil {
		return err
	}
	return send(request, token, answer)
}

func getJSON(address, token string, answer interface{}) error {
	request, err := http.NewRequest(http.MethodGet, address, nil)
	if err != nil {
		return err
	}
	return send(request, token, answer)
}

func send(request *http.Request, token string, answer interface{}) error {
	request.Header.Set("Content-Type", "application/json")
	if token != "" {
		request.Header.Set("X-ECV-Token", token)
	}
	response, err := httpClient.Do(request)
	if err != nil {
		return err
	}
	defer response.Body.Close()
	text, err := io.ReadAll(io.LimitReader(response.Body, maximumBody))
	if err != nil {
		return err
	}
	if response.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", request.Method, request.URL.Path, response.StatusCode, strings.TrimSpace(string(text)))
	}
	if answer == nil {
		return nil
	}
	return json.Unmarshal(text, answer)
}

// webSocketURL turns the service's http:// base into ws:// with path and query.
func webSocketURL(base, path string, query url.Values) string {
	return strings.Replace(strings.Replace(base, "https://", "wss://", 1), "http://", "ws://", 1) + path + "?" + query.Encode()
}

func dialWebSocket(address string) (*websocket.Conn, error) {
	config, err := websocket.NewConfig(address, "http://127.0.0.1/")
	if err != nil {
		return nil, err
	}
	config.Dialer = nil
	connection, err := websocket.DialConfig(config)
	if err != nil {
		return nil, err
	}
	connection.MaxPayloadBytes = maximumBody
	return connection, nil
}

// signal is one AppRTC payload (docs/protocol.md §2.6).
type signal struct {
	Type      string `json:"type"`
	SDP       string `json:"sdp,omitempty"`
	Label     *int   `json:"label,omitempty"`
	ID        string `json:"id,omitempty"`
	Candidate string `json:"candidate,omitempty"`
}

// flexibleBool reads "true"/"false" or a JSON boolean (is_initiator).
type flexibleBool bool

func (value *flexibleBool) UnmarshalJSON(data []byte) error {
	text := strings.Trim(string(data), `"`)
	*value = flexibleBool(text == "true")
	return nil
}

type joinAnswer struct {
	Result string `json:"result"`
	Params struct {
		ClientID    string       `json:"client_id"`
		IsInitiator flexibleBool `json:"is_initiator"`
		Messages    []string     `json:"messages"`
		WssURL      string       `json:"wss_url"`
	} `json:"params"`
}

// The one Pion API of the process: codecs and interceptors as Pion sets them up by default
// (NACK, RTCP reports, TWCC), host candidates on IPv4 without mDNS (the ECVKit ends use libnice's
// host candidates on the same machine; libnice ignores 127.0.0.1, Pion skips loopback by default).
var pionAPI = func() *webrtc.API {
	media := &webrtc.MediaEngine{}
	if err := media.RegisterDefaultCodecs(); err != nil {
		fail("codecs: %v", err)
	}
	registry := &interceptor.Registry{}
	if err := webrtc.RegisterDefaultInterceptors(media, registry); err != nil {
		fail("interceptors: %v", err)
	}
	settings := webrtc.SettingEngine{}
	settings.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	settings.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	return webrtc.NewAPI(webrtc.WithMediaEngine(media), webrtc.WithInterceptorRegistry(registry), webrtc.WithSettingEngine(settings))
}()

// roomCall is one side of a call in its AppRTC room: the join, the collider socket, the SDP
// and candidates both ways. prepare adds the tracks and transceivers before any description.
type roomCall struct {
	base, rtcID, token string
	peer               *webrtc.PeerConnection
	socket             *websocket.Conn
	lock               sync.Mutex
	remoteSet          bool
	pending            []webrtc.ICECandidateInit
	closed             bool
	// The bundle's first media id (a=mid) of the local description, named in candidates.
	mid string
}

func startRoomCall(base, rtcID, token string, prepare func(*webrtc.PeerConnection) error) (*roomCall, error) {
	call := &roomCall{base: base, rtcID: rtcID, token: token}
	var join joinAnswer
	if err := postJSON(base+"/join/"+url.PathEscape(rtcID), token, nil, &join); err != nil {
		return nil, err
	}
	if join.Result != "SUCCESS" {
		return nil, fmt.Errorf("join %s: %s", rtcID, join.Result)
	}
	peer, err := pionAPI.NewPeerConnection(webrtc.Configuration{BundlePolicy: webrtc.BundlePolicyMaxBundle, RTCPMuxPolicy: webrtc.RTCPMuxPolicyRequire})
	if err != nil {
		return nil, err
	}
	call.peer = peer
	if err := prepare(peer); err != nil {
		call.close()
		return nil, err
	}
	socket, err := dialWebSocket(join.Params.WssURL + "?" + url.Values{"token": {token}}.Encode())
	if err != nil {
		call.close()
		return nil, err
	}
	call.socket = socket
	register, _ := json.Marshal(map[string]string{"cmd": "register", "roomid": rtcID, "clientid": join.Params.ClientID})
	if err := websocket.Message.Send(socket, string(register)); err != nil {
		call.close()
		return nil, err
	}
	peer.OnICEConnectionStateChange(func(state webrtc.ICEConnectionState) { debug("%s: ICE %s", rtcID, state) })
	peer.SCTP().Transport().ICETransport().OnSelectedCandidatePairChange(func(pair *webrtc.ICECandidatePair) { debug("%s: pair %s", rtcID, pair) })
	peer.OnICECandidate(func(candidate *webrtc.ICECandidate) {
		debug("%s: local candidate %v", rtcID, candidate)
		if candidate == nil {
			return // end of candidates is not signalled (§2.6)
		}
		// Not peer.LocalDescription() here: it asks the gatherer for its candidates while the
		// gatherer waits for this callback.
		label := 0
		call.lock.Lock()
		mid := call.mid
		call.lock.Unlock()
		call.send(signal{Type: "candidate", Label: &label, ID: mid, Candidate: candidate.ToJSON().Candidate})
	})
	if join.Params.IsInitiator {
		// The first joiner offers and opens the text channel (§2).
		if _, err := peer.CreateDataChannel("textchannel", nil); err != nil {
			call.close()
			return nil, err
		}
		offer, err := peer.CreateOffer(nil)
		if err == nil {
			call.setMid(offer.SDP)
			err = peer.SetLocalDescription(offer)
		}
		if err != nil {
			call.close()
			return nil, err
		}
		call.send(signal{Type: "offer", SDP: offer.SDP})
	}
	for _, message := range join.Params.Messages {
		call.handle(message)
	}
	go call.readSocket()
	return call, nil
}

func firstMid(sdp string) string {
	for _, line := range strings.Split(sdp, "\n") {
		if strings.HasPrefix(line, "a=mid:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "a=mid:"))
		}
	}
	return "0"
}

func (call *roomCall) setMid(sdp string) {
	call.lock.Lock()
	call.mid = firstMid(sdp)
	call.lock.Unlock()
}

func (call *roomCall) send(payload signal) {
	text, _ := json.Marshal(payload)
	command, _ := json.Marshal(map[string]string{"cmd": "send", "msg": string(text)})
	call.lock.Lock()
	defer call.lock.Unlock()
	if call.closed || call.socket == nil {
		return
	}
	_ = websocket.Message.Send(call.socket, string(command)) // a failed send shows as a call that never connects
}

func (call *roomCall) readSocket() {
	for {
		var frame string
		if err := websocket.Message.Receive(call.socket, &frame); err != nil {
			return
		}
		var delivery struct {
			Msg   string `json:"msg"`
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(frame), &delivery) != nil || delivery.Msg == "" {
			continue
		}
		call.handle(delivery.Msg)
	}
}

// handle applies one payload: an offer is answered, an answer set, candidates added once the
// remote description is there.
func (call *roomCall) handle(text string) {
	var payload signal
	if json.Unmarshal([]byte(text), &payload) != nil {
		return
	}
	debug("%s: %s %s", call.rtcID, payload.Type, payload.Candidate)
	switch payload.Type {
	case "offer":
		if err := call.peer.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: payload.SDP}); err != nil {
			emit("event %s failed offer: %v", call.rtcID, err)
			return
		}
		call.remoteDescriptionSet()
		answer, err := call.peer.CreateAnswer(nil)
		if err == nil {
			call.setMid(answer.SDP)
			err = call.peer.SetLocalDescription(answer)
		}
		if err != nil {
			emit("event %s failed answer: %v", call.rtcID, err)
			return
		}
		call.send(signal{Type: "answer", SDP: answer.SDP})
	case "answer":
		if err := call.peer.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: payload.SDP}); err != nil {
			emit("event %s failed answer: %v", call.rtcID, err)
			return
		}
		call.remoteDescriptionSet()
	case "candidate":
		mid := payload.ID
		var label *uint16
		if payload.Label != nil {
			value := uint16(*payload.Label)
			label = &value
		}
		candidate := webrtc.ICECandidateInit{Candidate: payload.Candidate, SDPMid: &mid, SDPMLineIndex: label}
		call.lock.Lock()
		if !call.remoteSet {
			call.pending = append(call.pending, candidate)
			call.lock.Unlock()
			return
		}
		call.lock.Unlock()
		_ = call.peer.AddICECandidate(candidate) // a candidate Pion cannot use is one fewer pair
	case "bye":
		call.close()
	}
}

func (call *roomCall) remoteDescriptionSet() {
	call.lock.Lock()
	call.remoteSet = true
	pending := call.pending
	call.pending = nil
	call.lock.Unlock()
	for _, candidate := range pending {
		_ = call.peer.AddICECandidate(candidate)
	}
}

func (call *roomCall) close() {
	call.lock.Lock()
	if call.closed {
		call.lock.Unlock()
		return
	}
	call.closed = true
	socket := call.socket
	call.lock.Unlock()
	if socket != nil {
		socket.Close()
	}
	if call.peer != nil {
		call.peer.Close()
	}
}
