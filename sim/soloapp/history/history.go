package history

// history: replay and performance history (docs/device-protocol.md#history).
// Replay records are the folders the replay leaves under <solopiDir>/replay
// (each with info.json); performance records are the folders under
// <solopiDir>/records (performance-<sid> and the legacy layouts).

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/internal/lazyregexp"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/sim/soloapp/core"
	"github.com/solopi-dev/solopi/sim/soloapp/perf"
)

// History is the history resolver. It refuses to delete the records of a
// live replay or performance recording, which it asks the app (replayLive)
// and the performance resolver about.
type History struct {
	*core.App
	Perf *perf.Perf
	// ReplayLiveLocked reports whether a harness replay of p is live.
	ReplayLiveLocked func(p *core.Process) bool
}

// historyProc is the history state of one process: its delete receipts.
type historyProc struct{ history *core.ReceiptLRU }

var historySlot = core.NewSlot(func() *historyProc { return &historyProc{history: core.NewReceiptLRU(64)} })

func historySx(p *core.Process) *historyProc { return historySlot.Of(p) }

var historyMachine = protocol.HistoryDelete()

var (
	// A performance folder is performance-<session id> or one of the app's
	// older time-range names.
	perfFolderRes = []*lazyregexp.Regexp{
		lazyregexp.New(`^\d{14}_\d{14}$`),
		lazyregexp.New(`^\d{2}月\d{2}日\d{2}:\d{2}:\d{2}-\d{2}月\d{2}日\d{2}:\d{2}:\d{2}$`),
		lazyregexp.New(`^\d{2}-\d{2} \d{2}:\d{2}:\d{2}_\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`),
	}
	csvNameRe       = lazyregexp.New(`^(.+)_([^_]+)_([0-9a-f]{16})_(\d+)_(\d+)\.csv$`)
	legacyCSVNameRe = lazyregexp.New(`^(.+)_([^_]+)_(\d+)_(\d+)\.csv$`)
)

// Content limits of the detail queries.
const (
	deviceJSONLimit   = 128 * 1024
	otherJSONLimit    = 256 * 1024
	logPreviewLimit   = 64 * 1024
	csvPreviewLimit   = 64 * 1024
	csvPreviewTotal   = 512 * 1024
	maxDeleteEntries  = 2048
	maxReplayFiles    = 256
	maxPerfFiles      = 64
	maxListedMetrics  = 20
	historyListMaxLen = 500
)

func HistoryID(kind, folder string) string { return kind + "-" + core.Sha256Hex(kind+"\x00"+folder) }

// historyRecord is one record folder found on disk.
type historyRecord struct {
	kind, folder, dir, id string
	modifiedAt, sortKey   int64
	files                 []fs.FileInfo
	info                  any // replay: parsed info.json (nil when unreadable)
	infoErr               string
	csvs                  []csvMeta // performance
}

type csvMeta struct {
	file               fs.FileInfo
	name, source       string
	startTime, endTime int64
}

func parseCSVName(n string) (csvMeta, bool) {
	if m := csvNameRe.FindStringSubmatch(n); m != nil {
		s, _ := strconv.ParseInt(m[4], 10, 64)
		e, _ := strconv.ParseInt(m[5], 10, 64)
		return csvMeta{name: m[1], source: m[2], startTime: s, endTime: e}, true
	}
	if m := legacyCSVNameRe.FindStringSubmatch(n); m != nil {
		s, _ := strconv.ParseInt(m[3], 10, 64)
		e, _ := strconv.ParseInt(m[4], 10, 64)
		return csvMeta{name: m[1], source: m[2], startTime: s, endTime: e}, true
	}
	return csvMeta{}, false
}

// scanHistory lists the records of one kind, sorted newest first.
func (a *History) scanHistory(kind string) ([]*historyRecord, error) {
	a.Mu.Lock()
	root := a.SolopiDirLocked() + "/replay"
	if kind == "performance" {
		root = a.RecordsRootLocked()
	}
	a.Mu.Unlock()
	entries, err := a.Phone.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*historyRecord
	for _, e := range entries {
		if !e.IsDir() || e.Mode()&fs.ModeSymlink != 0 {
			continue
		}
		r := &historyRecord{kind: kind, folder: e.Name(), dir: root + "/" + e.Name(), id: HistoryID(kind, e.Name()),
			modifiedAt: core.Millis(e.ModTime())}
		files, err := a.Phone.ReadDir(r.dir)
		if err != nil {
			continue
		}
		r.files = files
		if kind == "replay" {
			if !a.loadReplayInfo(r) {
				continue
			}
		} else if !a.loadPerfRecord(r) {
			continue
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].sortKey != out[j].sortKey {
			return out[i].sortKey > out[j].sortKey
		}
		return out[i].id < out[j].id
	})
	return out, nil
}

func (a *History) loadReplayInfo(r *historyRecord) bool {
	i := slices.IndexFunc(r.files, func(f fs.FileInfo) bool { return f.Name() == "info.json" && f.Mode().IsRegular() })
	if i < 0 {
		return false
	}
	r.sortKey = r.modifiedAt
	if r.files[i].Size() > otherJSONLimit {
		r.infoErr = "content_too_large"
		return true
	}
	data, err := a.Phone.ReadFile(r.dir + "/info.json")
	var v any
	if err == nil {
		v, err = canonjson.Decode(data)
	}
	m, isObj := v.(map[string]any)
	if err != nil || !isObj {
		r.infoErr = "invalid_metadata"
		return true
	}
	r.info = m
	if n, isNum := m["startTime"].(json.Number); isNum {
		if st, err := n.Int64(); err == nil {
			r.sortKey = st
		}
	}
	return true
}

func (a *History) loadPerfRecord(r *historyRecord) bool {
	if !validPerfFolder(r.folder) {
		return false
	}
	for _, f := range r.files {
		if !f.Mode().IsRegular() {
			continue
		}
		if m, found := parseCSVName(f.Name()); found {
			m.file = f
			r.csvs = append(r.csvs, m)
			r.sortKey = max(r.sortKey, m.endTime)
		}
	}
	sort.Slice(r.csvs, func(i, j int) bool { return r.csvs[i].file.Name() < r.csvs[j].file.Name() })
	return len(r.csvs) > 0
}

func (r *historyRecord) summary(list bool) core.Obj {
	o := core.NewObj("id", r.id, "kind", r.kind, "modifiedAt", r.modifiedAt, "relativePath", r.folder, "pathAvailable", true)
	if r.kind == "replay" {
		o.Set("metadataAvailable", r.info != nil)
		if r.info == nil {
			o.Set("metadataError", r.infoErr)
			return o
		}
		m := r.info.(map[string]any)
		for _, k := range []string{"caseName", "targetApp", "targetAppPkg", "targetAppVersion", "startTime", "endTime",
			"exceptionMessage", "exceptionStep", "exceptionStepId", "platform", "platformVersion"} {
			if v, present := m[k]; present && v != nil {
				o.Set(k, v)
			}
		}
		status := "passed"
		if v, present := m["exceptionMessage"]; present && v != nil {
			status = "failed"
		}
		o.Set("status", status)
		return o
	}
	var start, end, size int64
	var metrics []string
	for i, c := range r.csvs {
		if i == 0 || c.startTime < start {
			start = c.startTime
		}
		end = max(end, c.endTime)
		size += c.file.Size()
		if !slices.Contains(metrics, c.name) {
			metrics = append(metrics, c.name)
		}
	}
	o.Set("startTime", start)
	o.Set("endTime", end)
	o.Set("fileCount", len(r.csvs))
	o.Set("sizeBytes", size)
	if list {
		o.Set("metricsTruncated", len(metrics) > maxListedMetrics)
		o.Set("metrics", metrics[:min(len(metrics), maxListedMetrics)])
	}
	return o
}

func (r *historyRecord) descriptor(f fs.FileInfo) core.Obj {
	return core.NewObj("fileName", f.Name(), "sizeBytes", f.Size(), "modifiedAt", core.Millis(f.ModTime()),
		"relativePath", r.folder+"/"+f.Name(), "pathAvailable", true)
}

func (a *History) HistoryResolver(ctx context.Context, p *core.Process, via core.Transport, q core.Params) (resp core.Obj) {
	act := q["action"]
	switch act {
	case "":
		return core.E1(protocol.ErrMissingAction, "Parameter 'action' is required")
	case "listReplay":
		return a.historyList("replay", q)
	case "listPerformance":
		return a.historyList("performance", q)
	case "getReplay":
		return a.historyGet("replay", q)
	case "getPerformance":
		return a.historyGet("performance", q)
	case "mutationStatus":
		return a.MutationStatus(p, q, historySx(p).history)
	case "deleteReplay":
		return a.historyDelete(p, via, "replay", q)
	case "deletePerformance":
		return a.historyDelete(p, via, "performance", q)
	}
	return core.E1(protocol.ErrUnsupportedAction, "Unsupported history action: "+act)
}

func (a *History) historyList(kind string, q core.Params) core.Obj {
	limit := 100
	if v, present := q["limit"]; present && v != "" {
		n, good := core.JavaParseInt(v)
		if !good {
			return core.E1(protocol.ErrInvalidLimit, "Parameter 'limit' must be an integer")
		}
		if n < 1 || n > historyListMaxLen {
			return core.E1(protocol.ErrInvalidLimit, "Parameter 'limit' must be between 1 and 500")
		}
		limit = int(n)
	}
	recs, err := a.scanHistory(kind)
	if err != nil {
		return core.E1(protocol.ErrIoError, "Unable to access history storage")
	}
	out := []core.Obj{}
	for _, r := range recs[:min(limit, len(recs))] {
		out = append(out, r.summary(true))
	}
	return core.OK("kind", kind, "records", out, "total", len(recs), "returned", len(out), "truncated", len(out) < len(recs))
}

// findRecord validates an id parameter and looks the record up.
func (a *History) findRecord(kind, id string) (*historyRecord, core.Obj) {
	prefix := "replay-"
	if kind == "performance" {
		prefix = "performance-"
	}
	if id == "" {
		return nil, core.E1(protocol.ErrMissingID, "Parameter 'id' is required")
	}
	if !protocol.ValidPrefixedHex(id, prefix, 64) {
		return nil, core.E1(protocol.ErrInvalidID, "Parameter 'id' is invalid")
	}
	recs, err := a.scanHistory(kind)
	if err != nil {
		return nil, core.E1(protocol.ErrIoError, "Unable to access history storage")
	}
	for _, r := range recs {
		if r.id == id {
			return r, nil
		}
	}
	return nil, nil
}

func (a *History) historyGet(kind string, q core.Params) core.Obj {
	r, bad := a.findRecord(kind, q["id"])
	if bad != nil {
		return bad
	}
	if r == nil {
		if kind == "replay" {
			return core.E1(protocol.ErrRecordNotFound, "Replay history record was not found")
		}
		return core.E1(protocol.ErrRecordNotFound, "Performance history record was not found")
	}
	if kind == "replay" {
		return a.replayDetail(r)
	}
	return a.perfDetail(r)
}

func (a *History) replayDetail(r *historyRecord) core.Obj {
	switch r.infoErr {
	case "content_too_large":
		return core.E1(protocol.ErrContentTooLarge, "Replay metadata is too large")
	case "invalid_metadata":
		return core.E1(protocol.ErrInvalidMetadata, "Replay metadata is invalid")
	}
	o := append(core.OK(), r.summary(false)...)
	o.Set("info", r.info)
	files := slices.Clone(r.files)
	files = slices.DeleteFunc(files, func(f fs.FileInfo) bool { return !f.Mode().IsRegular() })
	sort.Slice(files, func(i, j int) bool { return files[i].Name() < files[j].Name() })
	list := []core.Obj{}
	for _, f := range files[:min(len(files), maxReplayFiles)] {
		list = append(list, r.descriptor(f))
	}
	o.Set("files", list)
	o.Set("filesTruncated", len(files) > maxReplayFiles)
	for _, j := range []struct {
		key, file string
		limit     int64
	}{{"device", "device.json", deviceJSONLimit}, {"steps", "steps.json", otherJSONLimit}, {"actions", "actions.json", otherJSONLimit}} {
		i := slices.IndexFunc(files, func(f fs.FileInfo) bool { return f.Name() == j.file })
		if i < 0 {
			continue
		}
		d := r.descriptor(files[i])
		d.Set("format", "json")
		if files[i].Size() > j.limit {
			d = append(d, core.NewObj("contentAvailable", false, "omitted", true, "reason", "content_limit", "contentLimitBytes", j.limit)...)
		} else {
			data, err := a.Phone.ReadFile(r.dir + "/" + j.file)
			var v any
			if err == nil {
				v, err = canonjson.Decode(data)
			}
			if err != nil {
				d = append(d, core.NewObj("contentAvailable", false, "errorCode", "invalid_json", "error", "Content is not valid JSON")...)
			} else {
				d.Set("content", v)
			}
		}
		o.Set(j.key, d)
	}
	if i := slices.IndexFunc(files, func(f fs.FileInfo) bool { return f.Name() == "running.log" }); i >= 0 {
		data, _ := a.Phone.ReadFile(r.dir + "/running.log")
		truncated := len(data) > logPreviewLimit
		if truncated {
			data = data[:logPreviewLimit]
			for len(data) > 0 && !utf8.Valid(data) {
				data = data[:len(data)-1]
			}
		}
		d := r.descriptor(files[i])
		d = append(d, core.NewObj("text", strings.ToValidUTF8(string(data), "\uFFFD"), "charset", "UTF-8",
			"truncated", truncated, "contentLimitBytes", logPreviewLimit)...)
		o.Set("log", d)
	}
	return o
}

func (a *History) perfDetail(r *historyRecord) core.Obj {
	a.Mu.Lock()
	charset := a.StringSetting(core.KeyOutputCharset)
	a.Mu.Unlock()
	o := append(core.OK(), r.summary(false)...)
	list := []core.Obj{}
	budget := csvPreviewTotal
	for _, c := range r.csvs[:min(len(r.csvs), maxPerfFiles)] {
		d := r.descriptor(c.file)
		d = append(d, core.NewObj("name", c.name, "source", c.source, "startTime", c.startTime, "endTime", c.endTime)...)
		data, _ := a.Phone.ReadFile(r.dir + "/" + c.file.Name())
		n := min(len(data), csvPreviewLimit, budget)
		budget -= n
		d.Set("preview", perf.DecodeCharset(data[:n], charset))
		list = append(list, d)
	}
	o.Set("files", list)
	o.Set("filesTruncated", len(r.csvs) > maxPerfFiles)
	o.Set("contentLimitBytes", csvPreviewTotal)
	return o
}

func (a *History) historyDelete(p *core.Process, via core.Transport, kind string, q core.Params) core.Obj {
	if via != core.ViaAdb {
		return core.E1(protocol.ErrMutationTransportRequired, "History deletion requires the ADB scheme transport")
	}
	if bad := core.CheckRequestID(q); bad != nil {
		return bad
	}
	id := q["id"]
	prefix := "replay-"
	if kind == "performance" {
		prefix = "performance-"
	}
	if id == "" {
		return core.E1(protocol.ErrMissingID, "Parameter 'id' is required")
	}
	if !protocol.ValidPrefixedHex(id, prefix, 64) {
		return core.E1(protocol.ErrInvalidID, "Parameter 'id' is invalid")
	}
	if q["confirmId"] != id {
		return core.E1(protocol.ErrConfirmationMismatch, "Parameter 'confirmId' must exactly match 'id'")
	}
	action := "delete" + strings.ToUpper(kind[:1]) + kind[1:]
	reqID := q["requestId"]
	a.Mu.Lock()
	if r, found := historySx(p).history.Get(reqID); found {
		a.Mu.Unlock()
		if r.Get("action") != action || r.Get("id") != id {
			return core.E1(protocol.ErrRequestIDConflict, "The requestId is already associated with another mutation")
		}
		return r.Clone()
	}
	st, _ := historyMachine.Step(historyMachine.Initial, protocol.EvMutationAccept)
	requested := a.NowMs()
	receipt := core.OK("requestId", reqID, "action", action, "kind", kind, "id", id, "state", string(st),
		"deleted", false, "deletedFiles", 0, "requestedAt", requested)
	historySx(p).history.Put(reqID, receipt, "")
	a.Mu.Unlock()

	deleted, code, msg := a.executeHistoryDelete(p, kind, id)
	ev := protocol.EvMutationComplete
	if code != "" {
		ev = protocol.EvMutationFail
	}
	final, _ := historyMachine.Step(st, ev)
	receipt = core.OK("requestId", reqID, "action", action, "kind", kind, "id", id, "state", string(final),
		"deleted", code == "", "deletedFiles", deleted, "completedAt", a.NowMs(), "requestedAt", requested)
	if code != "" {
		receipt.Set("success", false)
		receipt.Set("errorCode", code)
		receipt.Set("error", msg)
	}
	a.Mu.Lock()
	defer a.Mu.Unlock()
	historySx(p).history.Put(reqID, receipt, "")
	return receipt.Clone()
}

// executeHistoryDelete removes a record's files in the device's order and
// then the folder; it returns the number of files deleted or a failure.
func (a *History) executeHistoryDelete(p *core.Process, kind, id string) (int, string, string) {
	a.Mu.Lock()
	switch {
	case kind == "replay" && a.ReplayLiveLocked(p):
		a.Mu.Unlock()
		return 0, protocol.ErrReplayActive, "An active replay session prevents history deletion"
	case kind == "performance" && a.Perf.RecordingLiveLocked(p):
		a.Mu.Unlock()
		return 0, protocol.ErrPerformanceActive, "An active performance session prevents history deletion"
	}
	a.Mu.Unlock()
	r, bad := a.findRecord(kind, id)
	if bad != nil {
		return 0, protocol.ErrDeleteFailed, "Unable to enumerate history record"
	}
	if r == nil {
		return 0, protocol.ErrRecordNotFound, "History record was not found"
	}
	if len(r.files) > maxDeleteEntries {
		return 0, protocol.ErrUnsafeRecordLayout, "Record contains too many entries to delete safely"
	}
	for _, f := range r.files {
		if !f.Mode().IsRegular() {
			return 0, protocol.ErrUnsafeRecordLayout, "Record contains a non-file or indirect entry"
		}
	}
	files := slices.Clone(r.files)
	// Replay: info.json last (a half-deleted record loses its marker only
	// at the end). Performance: non-CSV files first, CSVs last.
	last := func(f fs.FileInfo) bool {
		if kind == "replay" {
			return f.Name() == "info.json"
		}
		return strings.HasSuffix(f.Name(), ".csv")
	}
	sort.SliceStable(files, func(i, j int) bool {
		li, lj := last(files[i]), last(files[j])
		if li != lj {
			return !li
		}
		return files[i].Name() < files[j].Name()
	})
	n := 0
	for _, f := range files {
		if err := a.Phone.Remove(r.dir + "/" + f.Name()); err != nil {
			return n, protocol.ErrDeleteFailed, "Unable to delete every record file"
		}
		n++
	}
	if err := a.Phone.Remove(r.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return n, protocol.ErrDeleteFailed, "Unable to delete record directory"
	}
	return n, "", ""
}

// validPerfFolder reports whether name is a performance folder name the app
// writes: performance-<session id>, or an older time-range name.
func validPerfFolder(name string) bool {
	if id, ok := strings.CutPrefix(name, "performance-"); ok && protocol.ValidID(id, 116) {
		return true
	}
	return slices.ContainsFunc(perfFolderRes, func(re *lazyregexp.Regexp) bool { return re.MatchString(name) })
}
