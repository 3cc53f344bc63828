package artifacts

import (
	"cmp"
	"os"
	"path"
	"path/filepath"
	"sort"
	"sync"

	"github.com/solopi-dev/solopi/fault"
)

// syncWorkers bounds the fsyncs Sync runs at once. Concurrent fsyncs on one
// file system share journal commits, so a set of files costs about as much
// as a few of them written one after the other.
const syncWorkers = 8

// markUnsynced records that rel must be made durable by the next Sync; the
// caller holds d.mu.
func (d *Dir) markUnsynced(rel string) {
	if d.unsynced == nil {
		d.unsynced = map[string]bool{}
	}
	d.unsynced[rel] = true
}

// Sync makes every file committed or appended since the last Sync durable:
// their data, then the directories that name them (up to the root's own
// entry in its parent). A writer of evidence calls it once when the set is
// complete; WriteManifest and PublishDir call it themselves.
func (d *Dir) Sync() error {
	d.mu.Lock()
	files := make([]string, 0, len(d.unsynced))
	for rel := range d.unsynced {
		files = append(files, rel)
	}
	d.unsynced = nil
	d.mu.Unlock()
	if len(files) == 0 {
		return nil
	}
	sort.Strings(files)
	dirs := map[string]bool{filepath.Dir(d.root): true, d.root: true}
	paths := make([]string, len(files))
	for i, rel := range files {
		paths[i] = filepath.Join(d.root, filepath.FromSlash(rel))
		for p := path.Dir(rel); p != "."; p = path.Dir(p) {
			dirs[filepath.Join(d.root, filepath.FromSlash(p))] = true
		}
	}
	if failed, err := syncAll(paths); err != nil {
		// Kept for the next Sync: a failure now is not a durable file.
		d.mu.Lock()
		for _, i := range failed {
			d.markUnsynced(files[i])
		}
		d.mu.Unlock()
		return fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot flush an artifact", err).With("path", files[failed[0]])
	}
	dirPaths := make([]string, 0, len(dirs))
	for p := range dirs {
		dirPaths = append(dirPaths, p)
	}
	sort.Strings(dirPaths)
	if failed, err := syncAll(dirPaths); err != nil {
		return fault.Wrap(fault.Invalid, fault.CodeArtifactWriteFailed, "cannot flush an artifact directory", err).With("path", dirPaths[failed[0]])
	}
	return nil
}

// syncAll fsyncs every path (a file or a directory), a few at once, and
// returns the indexes of those that failed, in order, and the first
// failure.
func syncAll(paths []string) ([]int, error) {
	errs := make([]error, len(paths))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(syncWorkers, len(paths)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = syncPath(paths[i])
			}
		})
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	var failed []int
	var first error
	for i, err := range errs {
		if err != nil {
			failed = append(failed, i)
			first = cmp.Or(first, err)
		}
	}
	return failed, first
}

// syncPath fsyncs one file or directory. fsync flushes the file, not the
// descriptor, so a read-only one does.
func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
