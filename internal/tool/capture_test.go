package tool

import (
	"strings"
	"testing"
)

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	c := &Capture{Max: 10}
	for i := 0; i < 100; i++ {
		c.Write([]byte{byte('a' + i%26)})
	}
	got := c.String()
	// 100 bytes: first 5 ("abcde") and last 5 (bytes 95..99) kept, 90 dropped.
	want := "abcde\n\n... [90 bytes of output dropped while capturing] ...\n\nrstuv"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	small := &Capture{Max: 10}
	small.Write([]byte("hello"))
	small.Write([]byte("world"))
	if small.String() != "helloworld" {
		t.Fatalf("under the bound: %q", small.String())
	}
	big := &Capture{Max: 1 << 10}
	chunk := []byte(strings.Repeat("x", 4096))
	for range 1000 {
		big.Write(chunk)
	}
	if cap(big.tail) > 8<<10 || !strings.Contains(big.String(), "bytes of output dropped") {
		t.Fatalf("memory not bounded: tail cap %d", cap(big.tail))
	}
}
