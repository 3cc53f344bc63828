package cmdutil

import (
	"github.com/solopi-dev/solopi/artifacts"
	"github.com/solopi-dev/solopi/fault"
)

// ReadInput reads a user's requirement, plan, matrix or decisions file (at
// most 64 MiB); what names it in errors ("plan", "--matrix").
func ReadInput(path, what string) ([]byte, error) {
	return artifacts.Input{What: what + " file", Code: fault.CodeFileUnreadable, Field: "file"}.Read(path)
}
