package terminal

import (
	"os"

	"golang.org/x/sys/unix"
)

// discardTypeahead drops keys typed while the model was working, so that a
// stray "y" cannot answer an approval question the person has not seen.
func discardTypeahead() {
	_ = unix.IoctlSetInt(int(os.Stdin.Fd()), unix.TCFLSH, unix.TCIFLUSH)
}
