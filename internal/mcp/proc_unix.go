//go:build unix

package mcp

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// isolateProcess puts a stdio server in its own process group, so a Ctrl-C
// at the terminal (SIGINT to the foreground group) cancels the tool call
// without killing every MCP server, and so closing can reach grandchildren.
func isolateProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup ends whatever is left of the server's process group after the
// SDK closed it (stdin closed, SIGTERM, SIGKILL to the leader only).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.Process.Pid <= 0 {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// monotonicNanos reads CLOCK_MONOTONIC, the launch seed of the periodic
// refresh (tools.md: "monotonic_ns ^ pid").
func monotonicNanos() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return uint64(ts.Nano())
}
