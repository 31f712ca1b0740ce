package tool

import (
	"fmt"
	"sync"
)

// DefaultCaptureBytes bounds what a Capture keeps: far more than any result
// the engine lets through (Truncate), small enough that `yes` running until
// the timeout cannot exhaust memory.
const DefaultCaptureBytes = 8 << 20

// Capture is an io.Writer for a child process's output that keeps the first
// and the last Max/2 bytes and counts what falls between, so memory stays
// bounded however much a command prints. It is safe for concurrent use.
type Capture struct {
	// Max is the number of bytes kept; 0 means DefaultCaptureBytes.
	Max int

	mu      sync.Mutex
	head    []byte
	tail    []byte // the newest bytes; trimmed to Max/2 when it doubles
	dropped int64
}

func (c *Capture) half() int {
	if c.Max <= 0 {
		return DefaultCaptureBytes / 2
	}
	return max(c.Max/2, 1)
}

// Write always succeeds; bytes beyond the bound are counted, not kept.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	h := c.half()
	if room := h - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) >= h { // one big write: only its end can survive
		c.dropped += int64(len(c.tail) + len(p) - h)
		c.tail = append(c.tail[:0], p[len(p)-h:]...)
		return n, nil
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*h {
		cut := len(c.tail) - h
		c.dropped += int64(cut)
		c.tail = append(c.tail[:0], c.tail[cut:]...)
	}
	return n, nil
}

// String returns what was kept, with a note where bytes were dropped.
func (c *Capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped == 0 {
		return string(c.head) + string(c.tail)
	}
	// Only the newest half of the tail counts as "the end".
	tail := c.tail
	if extra := len(tail) - c.half(); extra > 0 {
		tail = tail[extra:]
	}
	dropped := c.dropped + int64(len(c.tail)-len(tail))
	return fmt.Sprintf("%s\n\n... [%d bytes of output dropped while capturing] ...\n\n%s", c.head, dropped, tail)
}
