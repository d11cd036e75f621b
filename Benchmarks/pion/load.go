package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v3"
	"github.com/pion/webrtc/v3/pkg/media"
)

// counts is what one call was sent, as ClipPlayer.Counts encodes it.
type counts struct {
	Video            int `json:"video"`
	Audio            int `json:"audio"`
	KeyFrameRequests int `json:"keyFrameRequests"`
}

// feed is one call fed by the player.
type feed struct {
	video, audio *webrtc.TrackLocalStaticSample
	lock         sync.Mutex
	position     int
	keyWanted    bool
	counts       counts
	playing      bool
}

// player paces every call from one goroutine, as ClipPlayer does: each 20 ms every playing
// call's next Opus packet, and each video frame as it falls due, on absolute deadlines.
type player struct {
	clip  *clip
	lock  sync.Mutex
	feeds map[string]*feed
	stop  chan struct{}
}

func (p *player) run() {
	const tick = 20 * time.Millisecond
	frameInterval := time.Second / 15
	start := time.Now()
	videoSent := int64(0)
	for n := int64(1); ; n++ {
		deadline := start.Add(time.Duration(n) * tick)
		if wait := time.Until(deadline); wait > 0 {
			select {
			case <-p.stop:
				return
			case <-time.After(wait):
			}
		}
		videoDue := int64(time.Duration(n)*tick/frameInterval) > videoSent
		if videoDue {
			videoSent++
		}
		p.lock.Lock()
		feeds := make([]*feed, 0, len(p.feeds))
		for _, f := range p.feeds {
			feeds = append(feeds, f)
		}
		p.lock.Unlock()
		for _, f := range feeds {
			f.lock.Lock()
			if !f.playing {
				f.lock.Unlock()
				continue
			}
			audio := p.clip.audio[f.counts.Audio%len(p.clip.audio)]
			f.counts.Audio++
			var frame []byte
			if videoDue {
				if f.keyWanted {
					f.keyWanted = false
					f.position = p.clip.nearestKeyFrame(f.position)
				}
				frame = p.clip.video[f.position]
				f.position = (f.position + 1) % len(p.clip.video)
				f.counts.Video++
			}
			f.lock.Unlock()
			_ = f.audio.WriteSample(media.Sample{Data: audio, Duration: tick}) // a closed call's write fails; it is removed at its end
			if frame != nil {
				_ = f.video.WriteSample(media.Sample{Data: frame, Duration: frameInterval})
			}
		}
	}
}

func (p *player) snapshot() map[string]counts {
	p.lock.Lock()
	defer p.lock.Unlock()
	result := map[string]counts{}
	for rtcID, f := range p.feeds {
		f.lock.Lock()
		result[rtcID] = f.counts
		f.lock.Unlock()
	}
	return result
}

type caller struct {
	rtcID, token string
	room         *roomCall
}

// runLoad places `calls` ECV calls on "dial", at most `concurrency` setting up at once and 20 ms
// apart; "mark" prints the counts; "hangup" ends every call, prints the counts and "done".
func runLoad(base string, calls, concurrency int, c *clip, commands *bufio.Scanner) {
	p := &player{clip: c, feeds: map[string]*feed{}, stop: make(chan struct{})}
	go p.run()
	var connected int64
	var placedLock sync.Mutex
	var placed []*caller
	emit("ready %d video frames (%d key frames), %d audio packets", len(c.video), len(c.keyFrames), len(c.audio))
	go func() {
		for range time.Tick(time.Second) {
			emit("connected %d loop-ms -", atomic.LoadInt64(&connected))
		}
	}()
	stopDialling := make(chan struct{})
	dialled := make(chan struct{})
	for commands.Scan() {
		switch strings.TrimSpace(commands.Text()) {
		case "dial":
			go func() {
				defer close(dialled)
				slots := make(chan struct{}, concurrency)
				for index := 0; index < calls; index++ {
					select {
					case <-stopDialling:
						return
					case slots <- struct{}{}:
					}
					one := &caller{}
					placedLock.Lock()
					placed = append(placed, one)
					placedLock.Unlock()
					go one.drive(base, index, p, &connected, func() { <-slots })
					time.Sleep(20 * time.Millisecond)
				}
			}()
		case "mark":
			text, _ := json.Marshal(p.snapshot())
			emit("counts %s", text)
		case "hangup":
			close(stopDialling)
			<-dialled
			final := p.snapshot()
			close(p.stop)
			placedLock.Lock()
			var ending sync.WaitGroup
			for _, one := range placed {
				ending.Add(1)
				go func(one *caller) {
					defer ending.Done()
					one.hangup(base)
				}(one)
			}
			placedLock.Unlock()
			ending.Wait()
			time.Sleep(2 * time.Second)
			text, _ := json.Marshal(final)
			emit("counts %s", text)
			emit("done")
			return
		default:
			emit("unknown command %s", commands.Text())
		}
	}
}

// drive dials one call, waits for its agent by polling, joins the room and sends the clip once
// connected. setUp gives the set-up slot back (once).
func (one *caller) drive(base string, index int, p *player, connected *int64, setUp func()) {
	var release sync.Once
	releaseSlot := func() { release.Do(setUp) }
	defer releaseSlot()
	var issued struct {
		RtcID string `json:"rtcId"`
	}
	if err := postJSON(base+"/api/GetRtcId", "", nil, &issued); err != nil {
		emit("event - failed GetRtcId: %v", err)
		return
	}
	var dial struct {
		CallerToken string `json:"callerToken"`
	}
	if err := postJSON(base+"/api/DialEx", "", map[string]string{"rtcId": issued.RtcID, "callerName": fmt.Sprintf("Pion load %d", index)}, &dial); err != nil {
		emit("event %s failed DialEx: %v", issued.RtcID, err)
		return
	}
	one.rtcID, one.token = issued.RtcID, dial.CallerToken
	for {
		var state struct {
			State string `json:"state"`
		}
		if err := getJSON(base+"/api/WaitForRoomInterval?"+url.Values{"rtcId": {one.rtcID}}.Encode(), one.token, &state); err != nil {
			emit("event %s failed polling: %v", one.rtcID, err)
			return
		}
		if state.State == "agent_connected" {
			break
		}
		if state.State == "ended" || state.State == "transferred" {
			emit("event %s ended %s", one.rtcID, state.State)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	f := &feed{}
	var counted int32
	room, err := startRoomCall(base, one.rtcID, one.token, func(peer *webrtc.PeerConnection) error {
		video, err := webrtc.NewTrackLocalStaticSample(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8}, "video", "pion")
		if err != nil {
			return err
		}
		audio, err := webrtc.NewTrackLocalStaticSample(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "audio", "pion")
		if err != nil {
			return err
		}
		f.video, f.audio = video, audio
		for _, track := range []*webrtc.TrackLocalStaticSample{video, audio} {
			sender, err := peer.AddTrack(track)
			if err != nil {
				return err
			}
			isVideo := track == video
			go func() {
				// RTCP from the bot: key-frame requests jump to the nearest key frame.
				for {
					packets, _, err := sender.ReadRTCP()
					if err != nil {
						return
					}
					for _, packet := range packets {
						switch packet.(type) {
						case *rtcp.PictureLossIndication, *rtcp.FullIntraRequest:
							if isVideo {
								f.lock.Lock()
								f.keyWanted = true
								f.counts.KeyFrameRequests++
								f.lock.Unlock()
							}
						}
					}
				}
			}()
		}
		peer.OnConnectionStateChange(func(state webrtc.PeerConnectionState) {
			switch state {
			case webrtc.PeerConnectionStateConnected:
				if atomic.CompareAndSwapInt32(&counted, 0, 1) {
					atomic.AddInt64(connected, 1)
					f.lock.Lock()
					f.playing = true
					f.lock.Unlock()
					releaseSlot()
				}
			case webrtc.PeerConnectionStateFailed, webrtc.PeerConnectionStateClosed:
				if atomic.CompareAndSwapInt32(&counted, 1, 2) {
					atomic.AddInt64(connected, -1)
				}
				f.lock.Lock()
				f.playing = false
				f.lock.Unlock()
			}
		})
		return nil
	})
	if err != nil {
		emit("event %s failed %v", one.rtcID, strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	p.lock.Lock()
	p.feeds[one.rtcID] = f
	p.lock.Unlock()
	one.room = room
	// Hold the slot until connected (released above) or 20 s, as the ECVKit callers do.
	deadline := time.Now().Add(20 * time.Second)
	for atomic.LoadInt32(&counted) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
}

func (one *caller) hangup(base string) {
	if one.rtcID == "" {
		return
	}
	_ = postJSON(base+"/api/Hangup", one.token, map[string]string{"rtcId": one.rtcID, "reason": "LOCAL_HANGUP"}, nil) // the room closes anyway
	if one.room != nil {
		one.room.close()
	}
}
