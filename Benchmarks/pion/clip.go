package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// clip is the parent's pre-encoded clip: VP8 frames (key frames marked) and 20 ms Opus packets.
type clip struct {
	video     [][]byte
	keyFrame  []bool
	audio     [][]byte
	keyFrames []int
}

// readClip reads the file `bench-call cost` wrote: records of one kind byte ('K' a VP8 key
// frame, 'D' another VP8 frame, 'A' an Opus packet), a big-endian uint32 length and the bytes.
func readClip(path string) (*clip, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	result := &clip{}
	header := make([]byte, 5)
	for {
		if _, err := io.ReadFull(file, header); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		length := binary.BigEndian.Uint32(header[1:])
		if length > 1<<20 {
			return nil, fmt.Errorf("%s: a record of %d bytes", path, length)
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(file, body); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		switch header[0] {
		case 'K', 'D':
			if header[0] == 'K' {
				result.keyFrames = append(result.keyFrames, len(result.video))
			}
			result.video = append(result.video, body)
			result.keyFrame = append(result.keyFrame, header[0] == 'K')
		case 'A':
			result.audio = append(result.audio, body)
		default:
			return nil, fmt.Errorf("%s: unknown record kind %q", path, header[0])
		}
	}
	if len(result.video) == 0 || !result.keyFrame[0] || len(result.audio) == 0 {
		return nil, fmt.Errorf("%s: the clip needs a key frame first and audio", path)
	}
	return result, nil
}

// nearestKeyFrame: the frame to continue from after a key-frame request (EncodedClip's rule).
func (c *clip) nearestKeyFrame(position int) int {
	behind, ahead := 0, len(c.video)
	for _, index := range c.keyFrames {
		if index <= position {
			behind = index
		} else {
			ahead = index
			break
		}
	}
	if position-behind <= ahead-position {
		return behind
	}
	return ahead % len(c.video)
}
