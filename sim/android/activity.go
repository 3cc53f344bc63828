package android

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/solopi-dev/solopi/sim/android/appspec"
)

// Intent is a parsed `am start` intent.
type Intent struct {
	Action     string
	Data       string // the -d URI, exactly as received
	Component  string // "pkg/cls" with the full class name, "" for implicit intents
	Categories []string
	Type       string
	Extras     map[string]string
	Flags      int
}

// Common intent constants.
const (
	actionMain       = "android.intent.action.MAIN"
	actionView       = "android.intent.action.VIEW"
	categoryLauncher = "android.intent.category.LAUNCHER"
	categoryHome     = "android.intent.category.HOME"
	flagNewTask      = 0x10000000
)

// Errors of activity resolution; am prints them in Android's words.
var (
	errUnresolved    = errors.New("unable to resolve intent")
	errClassNotFound = errors.New("activity class does not exist")
	errNoLauncher    = errors.New("no launcher activity")
)

// amFailure lets an activity handler make `am start` fail visibly, the way
// a SecurityException or a crash in the caller would: am prints Output and
// exits with Code. Any other handler error is only logged, as the real
// AdbSchemeActivity only logs its result.
type amFailure struct {
	Output string
	Code   int
}

func (e *amFailure) Error() string { return fmt.Sprintf("am start failed (%d): %s", e.Code, e.Output) }

// task is an Android task: one app's back stack.
type task struct {
	id    int
	pkg   string
	stack []*activityRecord // bottom first
}

type activityRecord struct {
	activity  string
	noHistory bool
	hash      uint32 // identity shown in dumpsys
}

func (t *task) top() *activityRecord {
	if len(t.stack) == 0 {
		return nil
	}
	return t.stack[len(t.stack)-1]
}

// splitComponent parses "pkg/cls" or "pkg/.Cls" into package and full class.
func splitComponent(comp string) (pkg, cls string, ok bool) {
	pkg, cls, ok = strings.Cut(comp, "/")
	if !ok || pkg == "" || cls == "" || strings.Contains(cls, "/") {
		return "", "", false
	}
	return pkg, appspec.FullClass(pkg, cls), true
}

// shortComponent formats pkg/cls the way ComponentName.flattenToShortString
// does.
func shortComponent(pkg, cls string) string { return pkg + "/" + appspec.ShortClass(pkg, cls) }

// RegisterActivityHandler makes `am start -n component` (and StartIntent)
// call h synchronously after the component's window came to the front. The
// component may use the short ".Cls" form. A nil h unregisters.
func (p *Phone) RegisterActivityHandler(component string, h func(ctx context.Context, in Intent) error) {
	pkg, cls, ok := splitComponent(component)
	if !ok {
		return
	}
	p.view(func() {
		if h == nil {
			delete(p.handlers, pkg+"/"+cls)
			return
		}
		p.handlers[pkg+"/"+cls] = h
	})
}

// Foreground returns the package and full activity class of the focused app
// window.
func (p *Phone) Foreground() (pkg, activity string) {
	p.view(func() { pkg, activity = p.foregroundLocked() })
	return pkg, activity
}

func (p *Phone) foregroundLocked() (string, string) {
	if t := p.topTaskLocked(); t != nil && t.top() != nil {
		return t.pkg, t.top().activity
	}
	return "", ""
}

func (p *Phone) topTaskLocked() *task {
	for i := len(p.tasks) - 1; i >= 0; i-- {
		if len(p.tasks[i].stack) > 0 {
			return p.tasks[i]
		}
	}
	return nil
}

func (p *Phone) taskLocked(pkg string) *task {
	for _, t := range p.tasks {
		if t.pkg == pkg {
			return t
		}
	}
	return nil
}

func (p *Phone) newRecordLocked(pkg, cls string) *activityRecord {
	var nh bool
	if a := p.apps[pkg]; a != nil {
		if sc := a.screens[cls]; sc != nil {
			nh = sc.NoHistory
		}
	}
	p.nextTaskID++
	return &activityRecord{activity: cls, noHistory: nh, hash: hash32(fmt.Sprintf("%s/%s#%d", pkg, cls, p.nextTaskID))}
}

// moveToFrontLocked puts t on top of the task list.
func (p *Phone) moveToFrontLocked(t *task) {
	i := slices.Index(p.tasks, t)
	if i >= 0 {
		p.tasks = slices.Delete(p.tasks, i, i+1)
	}
	p.tasks = append(p.tasks, t)
}

// afterForegroundChangeLocked applies what the system does whenever the
// front activity changes: noHistory activities that are no longer on top
// finish, empty tasks vanish, the launcher is always there, focus and the
// soft keyboard go away.
func (p *Phone) afterForegroundChangeLocked(prevPkg, prevAct string) {
	top := p.topTaskLocked()
	kept := p.tasks[:0]
	for _, t := range p.tasks {
		st := t.stack[:0]
		for i, r := range t.stack {
			isTop := t == top && i == len(t.stack)-1
			if r.noHistory && !isTop {
				continue
			}
			st = append(st, r)
		}
		t.stack = st
		if len(t.stack) > 0 {
			kept = append(kept, t)
		}
	}
	p.tasks = kept
	p.ensureLauncherLocked()
	pkg, act := p.foregroundLocked()
	if pkg != prevPkg || act != prevAct {
		p.clearFocusLocked()
	}
	p.touchLocked()
}

// ensureLauncherLocked keeps a home task alive: the system restarts the
// launcher whenever it is gone.
func (p *Phone) ensureLauncherLocked() {
	la := p.apps[launcherPackage]
	if la == nil || la.spec.LauncherActivity == "" {
		return
	}
	if t := p.taskLocked(launcherPackage); t != nil && len(t.stack) > 0 {
		return
	}
	p.startProcessLocked(la)
	p.nextTaskID++
	t := &task{id: p.nextTaskID, pkg: launcherPackage}
	t.stack = append(t.stack, p.newRecordLocked(launcherPackage, la.spec.LauncherActivity))
	// Home sits below everything else unless nothing else is there.
	p.tasks = append([]*task{t}, p.tasks...)
	p.touchLocked()
}

// resolveLocked finds the component an intent starts.
func (p *Phone) resolveLocked(in Intent) (pkg, cls string, err error) {
	return p.resolveInLocked(in, "")
}

// resolveInLocked resolves an intent, looking only at package only when it
// is not empty (like `cmd package resolve-activity … PACKAGE`).
func (p *Phone) resolveInLocked(in Intent, only string) (pkg, cls string, err error) {
	if in.Component != "" {
		pkg, cls, ok := splitComponent(in.Component)
		if !ok {
			return "", "", fmt.Errorf("bad component %q: %w", in.Component, errUnresolved)
		}
		a := p.apps[pkg]
		if a == nil {
			return "", "", fmt.Errorf("%s: %w", pkg, errUnresolved)
		}
		if a.screens[cls] == nil && p.handlers[pkg+"/"+cls] == nil {
			return pkg, cls, fmt.Errorf("%s/%s: %w", pkg, cls, errClassNotFound)
		}
		return pkg, cls, nil
	}
	scheme := ""
	if i := strings.Index(in.Data, ":"); i > 0 {
		scheme = in.Data[:i]
	}
	for _, name := range slices.Sorted(maps.Keys(p.apps)) {
		if only != "" && name != only {
			continue
		}
		a := p.apps[name]
		for i := range a.spec.Screens {
			sc := &a.spec.Screens[i]
			if sc.Activity == a.spec.LauncherActivity && in.Action == actionMain && in.Data == "" &&
				slices.Contains(in.Categories, categoryLauncher) {
				return name, sc.Activity, nil
			}
			for _, f := range sc.IntentFilters {
				if in.Action != "" && !slices.Contains(f.Actions, in.Action) {
					continue
				}
				if (scheme == "") != (len(f.Schemes) == 0) || (scheme != "" && !slices.Contains(f.Schemes, scheme)) {
					continue
				}
				okCats := true
				for _, c := range in.Categories {
					okCats = okCats && slices.Contains(f.Categories, c)
				}
				if okCats && (in.Action != "" || scheme != "") {
					return name, sc.Activity, nil
				}
			}
		}
	}
	return "", "", errUnresolved
}

// launchResult is what ActivityManager reports for one start.
type launchResult struct {
	pkg, cls    string
	state       string // COLD, WARM, HOT
	warning     string
	handler     activityHandler
	costMs      int
	app         *appRuntime
	sameAsFront bool
}

// startLocked starts the intent's activity and reports how.
func (p *Phone) startLocked(in Intent) (launchResult, error) {
	pkg, cls, err := p.resolveLocked(in)
	if err != nil {
		return launchResult{}, err
	}
	a := p.apps[pkg]
	prevPkg, prevAct := p.foregroundLocked()
	res := launchResult{pkg: pkg, cls: cls, handler: p.handlers[pkg+"/"+cls], app: a}
	st := a.spec.Startup
	t := p.taskLocked(pkg)
	rootIntent := cls == a.spec.LauncherActivity && t != nil && len(t.stack) > 0 && t.stack[0].activity == cls
	switch {
	case !a.running:
		p.startProcessLocked(a)
		res.state, res.costMs = "COLD", st.ColdMs
		t = nil
	case rootIntent:
		// The task that this intent started before is simply brought back.
		res.state, res.costMs = "HOT", st.HotMs
		if p.topTaskLocked() == t && t.top().activity == cls {
			res.warning = "Warning: Activity not started, intent has been delivered to currently running top-most instance."
			res.sameAsFront = true
		} else {
			res.warning = "Warning: Activity not started, its current task has been brought to the front"
		}
	default:
		res.state, res.costMs = "WARM", st.WarmMs
	}
	if t == nil {
		t = p.taskLocked(pkg)
	}
	if t == nil {
		p.nextTaskID++
		t = &task{id: p.nextTaskID, pkg: pkg}
		p.tasks = append(p.tasks, t)
	}
	if !rootIntent {
		t.stack = append(t.stack, p.newRecordLocked(pkg, cls))
	}
	p.moveToFrontLocked(t)
	p.afterForegroundChangeLocked(prevPkg, prevAct)
	p.logs.add(systemServerPID, 'I', "ActivityTaskManager", fmt.Sprintf("START u0 {%s} from uid 2000", intentBody(in, false)))
	return res, nil
}

// StartIntent starts an activity like `am start` (without -W) and, for a
// registered component, calls its handler synchronously.
func (p *Phone) StartIntent(ctx context.Context, in Intent) error {
	var res launchResult
	err := p.update(func() error {
		var err error
		res, err = p.startLocked(in)
		return err
	})
	if err != nil {
		return fmt.Errorf("start %s: %w", intentBody(in, false), err)
	}
	if res.handler != nil {
		if herr := res.handler(ctx, in); herr != nil {
			p.Log('W', "SchemeActivity", fmt.Sprintf("handler for %s/%s failed: %v", res.pkg, res.cls, herr))
			return fmt.Errorf("activity handler %s/%s: %w", res.pkg, appspec.ShortClass(res.pkg, res.cls), herr)
		}
	}
	return nil
}

// StartActivity is `am start -n component`.
func (p *Phone) StartActivity(component string) error {
	if _, _, ok := splitComponent(component); !ok {
		return fmt.Errorf("start activity: bad component %q: %w", component, errUnresolved)
	}
	return p.StartIntent(context.Background(), Intent{Component: component})
}

// LaunchApp starts pkg's launcher activity like tapping its icon (or
// `monkey -p pkg -c android.intent.category.LAUNCHER 1`).
func (p *Phone) LaunchApp(pkg string) error {
	var comp string
	p.view(func() {
		if a := p.apps[pkg]; a != nil && a.spec.LauncherActivity != "" {
			comp = pkg + "/" + a.spec.LauncherActivity
		}
	})
	if comp == "" {
		if !p.IsInstalled(pkg) {
			return fmt.Errorf("launch %s: %w", pkg, errNotInstalled)
		}
		return fmt.Errorf("launch %s: %w", pkg, errNoLauncher)
	}
	return p.StartIntent(context.Background(), Intent{Action: actionMain, Categories: []string{categoryLauncher}, Component: comp})
}

// Back is the BACK key.
func (p *Phone) Back() error { return p.KeyEvent(keycodeBack) }

// Home is the HOME key.
func (p *Phone) Home() error { return p.KeyEvent(KeycodeHome) }

// finishTopLocked finishes the front activity (BACK without app handling,
// also ActivityManager.unhandledBack as used by `am start -R`).
func (p *Phone) finishTopLocked() {
	t := p.topTaskLocked()
	if t == nil || t.pkg == launcherPackage && len(t.stack) <= 1 {
		return // the home screen does not finish
	}
	prevPkg, prevAct := p.foregroundLocked()
	t.stack = t.stack[:len(t.stack)-1]
	p.afterForegroundChangeLocked(prevPkg, prevAct)
}

func (p *Phone) goHomeLocked() {
	prevPkg, prevAct := p.foregroundLocked()
	p.ensureLauncherLocked()
	if t := p.taskLocked(launcherPackage); t != nil {
		p.moveToFrontLocked(t)
	}
	p.afterForegroundChangeLocked(prevPkg, prevAct)
}

// Tasks lists the back stacks front first, as "pkg/cls" per activity
// (top first) — a debugging aid for tests and `dumpsys activity`.
func (p *Phone) Tasks() [][]string {
	var out [][]string
	p.view(func() {
		for i := len(p.tasks) - 1; i >= 0; i-- {
			t := p.tasks[i]
			var acts []string
			for j := len(t.stack) - 1; j >= 0; j-- {
				acts = append(acts, t.pkg+"/"+t.stack[j].activity)
			}
			out = append(out, acts)
		}
	})
	return out
}

// intentBody renders the inside of Intent.toString: "act=… dat=… cmp=…".
// Like Android's toShortString with secure=true it hides the URI past the
// authority, so no query string can leak marker words into am's output.
func intentBody(in Intent, withFlags bool) string {
	var parts []string
	if in.Action != "" {
		parts = append(parts, "act="+in.Action)
	}
	if len(in.Categories) > 0 {
		parts = append(parts, "cat=["+strings.Join(in.Categories, ",")+"]")
	}
	if in.Data != "" {
		parts = append(parts, "dat="+safeURI(in.Data))
	}
	if in.Type != "" {
		parts = append(parts, "typ="+in.Type)
	}
	if withFlags && in.Flags != 0 {
		parts = append(parts, fmt.Sprintf("flg=0x%x", in.Flags))
	}
	if in.Component != "" {
		if pkg, cls, ok := splitComponent(in.Component); ok {
			parts = append(parts, "cmp="+shortComponent(pkg, cls))
		}
	}
	if len(in.Extras) > 0 {
		parts = append(parts, "(has extras)")
	}
	return strings.Join(parts, " ")
}

func safeURI(u string) string {
	scheme, rest, ok := strings.Cut(u, ":")
	if !ok {
		return "..."
	}
	if strings.HasPrefix(rest, "//") {
		auth := rest[2:]
		if i := strings.IndexAny(auth, "/?#"); i >= 0 {
			auth = auth[:i]
		}
		return scheme + "://" + auth + "/..."
	}
	return scheme + ":..."
}
