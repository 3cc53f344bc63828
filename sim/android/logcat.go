package android

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/clock"
)

// logEntry is one logcat record.
type logEntry struct {
	Seq   uint64
	Time  time.Time
	PID   int
	TID   int
	Level byte // V D I W E F
	Tag   string
	Msg   string
}

// systemServerPID is the pid that system-level log lines carry.
const systemServerPID = 1203

// logBuffer is logcat's bounded ring: the oldest entries are dropped once
// max entries are held, as the real main buffer drops by size.
type logBuffer struct {
	clk     clock.Clock
	mu      sync.Mutex
	max     int
	entries []logEntry
	seq     uint64
	wake    chan struct{}
}

func newLogBuffer(max int, clk clock.Clock) *logBuffer {
	return &logBuffer{clk: clk, max: max, wake: make(chan struct{})}
}

func (b *logBuffer) add(pid int, level byte, tag, msg string) {
	switch level {
	case 'V', 'D', 'I', 'W', 'E', 'F', 'A':
	default:
		level = 'I'
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	b.entries = append(b.entries, logEntry{Seq: b.seq, Time: b.clk.Now(), PID: pid, TID: pid, Level: level, Tag: tag, Msg: msg})
	if len(b.entries) > b.max {
		// Reslicing is amortized: append reallocates and copies only the
		// live tail once the capacity runs out.
		b.entries = b.entries[len(b.entries)-b.max:]
	}
	close(b.wake)
	b.wake = make(chan struct{})
}

// since returns the entries after seq and a channel closed at the next add.
func (b *logBuffer) since(seq uint64) ([]logEntry, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := len(b.entries)
	for i > 0 && b.entries[i-1].Seq > seq {
		i--
	}
	return append([]logEntry(nil), b.entries[i:]...), b.wake
}

func (b *logBuffer) clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.entries = nil
}

// Log appends a line to logcat's main buffer as the system server.
func (p *Phone) Log(level byte, tag, msg string) { p.logs.add(systemServerPID, level, tag, msg) }

// LogApp appends a line as the app's process (falls back to the system
// server's pid when the app is not running).
func (p *Phone) LogApp(pkg string, level byte, tag, msg string) {
	pid := systemServerPID
	if v, ok := p.ProcessRunning(pkg); ok {
		pid = v
	}
	p.logs.add(pid, level, tag, msg)
}

// Logcat returns the buffered entries, oldest first.
func (p *Phone) Logcat() []logEntry {
	e, _ := p.logs.since(0)
	return e
}

// ClearLogcat empties the buffer (`logcat -c`).
func (p *Phone) ClearLogcat() { p.logs.clear() }

// formatLog renders one entry in a logcat -v format: threadtime (default),
// time, brief, tag, process or raw. Multi-line messages get one prefixed
// line per message line, as logcat prints them.
func formatLog(e logEntry, format string) string {
	var prefix string
	ts := e.Time.Format("01-02 15:04:05.000")
	switch format {
	case "time":
		prefix = fmt.Sprintf("%s %c/%-8s(%5d): ", ts, e.Level, e.Tag, e.PID)
	case "brief":
		prefix = fmt.Sprintf("%c/%-8s(%5d): ", e.Level, e.Tag, e.PID)
	case "tag":
		prefix = fmt.Sprintf("%c/%-8s: ", e.Level, e.Tag)
	case "process":
		prefix = fmt.Sprintf("%c(%5d) ", e.Level, e.PID)
	case "raw":
	default:
		prefix = fmt.Sprintf("%s %5d %5d %c %-8s: ", ts, e.PID, e.TID, e.Level, e.Tag)
	}
	var b strings.Builder
	for _, line := range strings.Split(e.Msg, "\n") {
		b.WriteString(prefix)
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
