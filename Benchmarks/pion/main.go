// pion-bench: the Pion side of `bench-call cost`, a benchmark-only peer built from Debian's
// golang-github-pion-webrtc.v3-dev in GOPATH mode (never part of the product). It plays the
// roles ECVKit's benchmark children play, against the same reference service and the same
// ECVKit peers, and talks to the parent by the same stdout/stdin lines:
//
//	pion-bench cost-agents --service-url URL --bots N --first K --mode record|receive --dir DIR
//	    N agent bots (login, agent socket, accept, room, collider socket) that record each call
//	    with Pion's own IVF/Ogg writers (record) or read and drop its media (receive); prints
//	    "ready", then "connected N recording M loop-ms -" once a second.
//	pion-bench load --service-url URL --calls N --concurrency C --clip FILE
//	    N ECV callers (GetRtcId, DialEx, polling, room, collider socket) sending the clip the
//	    parent encoded (320x240 15 fps VP8, 20 ms Opus) from one pacing goroutine; reads
//	    dial / mark / hangup on stdin as `bench-call load` does.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"
)

var outputLock sync.Mutex

// emit writes one line for the parent (whole lines only: several goroutines emit).
func emit(format string, args ...interface{}) {
	outputLock.Lock()
	defer outputLock.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}

// debug writes to stderr when PION_BENCH_DEBUG is set (signaling, state and pair changes), each
// line with its wall-clock time to set beside the ECVKit side's.
func debug(format string, args ...interface{}) {
	if os.Getenv("PION_BENCH_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "pion-bench: %.3f "+format+"\n", append([]interface{}{float64(time.Now().UnixNano()) / 1e9}, args...)...)
	}
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "pion-bench: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: pion-bench cost-agents|load [options]")
	}
	flags := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	serviceURL := flags.String("service-url", "", "the reference service's base URL")
	bots := flags.Int("bots", 1, "agent bots in this process")
	first := flags.Int("first", 0, "the first bot's number")
	mode := flags.String("mode", "record", "record or receive")
	dir := flags.String("dir", os.TempDir(), "where recordings go")
	calls := flags.Int("calls", 1, "callers in this process")
	concurrency := flags.Int("concurrency", 10, "calls set up at once")
	clipPath := flags.String("clip", "", "the clip file the parent wrote")
	_ = flags.Int("jitter-buffer-ms", 0, "ignored: Pion has no jitter buffer in front of its writers")
	if err := flags.Parse(os.Args[2:]); err != nil {
		fail("%v", err)
	}
	if *serviceURL == "" {
		fail("--service-url is required")
	}
	switch os.Args[1] {
	case "cost-agents":
		if *mode != "record" && *mode != "receive" {
			fail("--mode is record or receive for Pion, got %s", *mode)
		}
		if *bots < 1 || *bots > 400 {
			fail("--bots takes 1...400")
		}
		runAgents(*serviceURL, *bots, *first, *mode == "record", *dir)
	case "load":
		if *calls < 1 || *calls > 400 || *concurrency < 1 {
			fail("--calls takes 1...400, --concurrency at least 1")
		}
		clip, err := readClip(*clipPath)
		if err != nil {
			fail("%v", err)
		}
		runLoad(*serviceURL, *calls, *concurrency, clip, bufio.NewScanner(os.Stdin))
	default:
		fail("unknown command %s", os.Args[1])
	}
}
