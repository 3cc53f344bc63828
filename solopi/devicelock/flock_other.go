//go:build !unix

package devicelock

import (
	"errors"
	"os"
)

var errUnsupported = errors.New("device locks need flock(2), which this system does not have")

func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

func tryLock(*os.File) error { return errUnsupported }

func unlock(*os.File) error { return errUnsupported }
