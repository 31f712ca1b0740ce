//go:build !linux

package terminal

// discardTypeahead is a no-op where TCFLSH is not available.
func discardTypeahead() {}
