//go:build !unix

package mcp

import (
	"os/exec"
	"time"
)

func isolateProcess(*exec.Cmd) {}

func killGroup(*exec.Cmd) {}

// monotonicNanos falls back to the wall clock where CLOCK_MONOTONIC is not
// available; it only seeds the refresh stagger.
func monotonicNanos() uint64 { return uint64(time.Now().UnixNano()) }
