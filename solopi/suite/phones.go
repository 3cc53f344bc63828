package suite

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/solopi-dev/solopi/clock"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
	"github.com/solopi-dev/solopi/solopi/devicelock"
	"github.com/solopi-dev/solopi/solopi/replay"
	"github.com/solopi-dev/solopi/suitereport"
)

// phone is one phone during the suite. Its fields after set-up belong to
// its worker, except usable and retired, which the queue reads under its
// lock.
type phone struct {
	index  int
	serial string
	model  string
	d      *device.Device
	lock   *devicelock.Lock
	usable bool
	// err is why set-up failed.
	err *fault.Error
	// cases is what the phone holds of each item, by item index (its
	// worker's).
	cases []binding
	// runnable and absent are the queue's copy of cases[i].runs() and
	// cases[i].absent (under the queue's lock).
	runnable, absent []bool
	// infraRun counts this phone's infrastructure failures in a row.
	infraRun int
}

// close releases what set-up took.
func (p *phone) close() {
	if p.d != nil {
		p.d.Close()
	}
	if p.lock != nil {
		p.lock.Release()
	}
}

// setUp readies every phone at once: its lock, its channel, its
// description, the readiness checks and what it holds of each case. A
// phone that fails is left out with its reason. Before anything runs, a
// case name conflict on any usable phone refuses the suite, and a suite
// without a usable phone is an error.
func (r *runner) setUp(ctx context.Context) ([]*phone, error) {
	phones := make([]*phone, len(r.o.Phones))
	devs := make([]suitereport.Device, len(r.o.Phones))
	for i, in := range r.o.Phones {
		phones[i] = &phone{index: i, serial: in.Serial}
		devs[i] = suitereport.Device{Serial: in.Serial}
	}
	lockErrs := make([]error, len(phones))
	if r.o.Locker != nil {
		lockErrs = r.lockPhones(ctx, phones)
	}
	var wg sync.WaitGroup
	for i, in := range r.o.Phones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := lockErrs[i]
			if err != nil {
				err = busyAfterWait(err, r.o.DeviceWait)
			} else {
				err = r.setUpPhone(ctx, in, phones[i], &devs[i])
			}
			if err != nil {
				e := fault.From(err)
				phones[i].err = e
				if !refusesSuite(e) {
					devs[i].LeftOut = &suitereport.Problem{Code: e.Code, Message: e.Message}
					r.progress(Event{Serial: in.Serial, Phase: "left-out", Message: e.Message})
				}
				return
			}
			devs[i].Usable = true
			phones[i].usable = true
			r.progress(Event{Serial: in.Serial, Phase: "ready", Message: devs[i].Model})
		}()
	}
	wg.Wait()
	r.report.Devices = devs
	var usable []*phone
	for _, p := range phones {
		if p.err != nil && refusesSuite(p.err) {
			return phones, p.err
		}
		if p.usable {
			usable = append(usable, p)
		}
	}
	if len(usable) == 0 {
		if len(phones) == 1 {
			return phones, phones[0].err
		}
		left := make([]map[string]any, len(devs))
		for i, d := range devs {
			left[i] = map[string]any{"serial": d.Serial, "errorCode": d.LeftOut.Code, "error": d.LeftOut.Message}
		}
		return phones, fault.Newf(fault.Failed, fault.CodeNoUsableDevice, "none of the %d phones passed its checks", len(phones)).With("devices", left).
			WithUserAction("Fix what each phone's error says (solopi doctor --serial S), then run the suite again.")
	}
	return phones, nil
}

// setUpPhone opens the channel of a phone it holds, describes the phone,
// checks it and reads what it holds of each case.
func (r *runner) setUpPhone(ctx context.Context, in Phone, p *phone, dev *suitereport.Device) error {
	d, err := in.Open(ctx)
	if err != nil {
		return err
	}
	p.d = d
	dev.Model, dev.AndroidVersion = describe(ctx, d)
	p.model = dev.Model
	if err := replay.Ready(ctx, d, r.o.Run.NoAutoStart, r.o.Run.AckTimeout); err != nil {
		return err
	}
	return r.checkAll(ctx, p)
}

// checkConcurrency bounds the case queries in flight per phone during
// set-up: every phone checks every case before anything runs.
const checkConcurrency = 8

// checkAll reads what the phone holds of every item: one list of its case
// names, then the cases it holds, a few at a time.
func (r *runner) checkAll(ctx context.Context, p *phone) error {
	p.cases = make([]binding, len(r.o.Items))
	list, err := replay.ListCases(ctx, p.d)
	if err != nil {
		return err
	}
	held := map[string]bool{}
	for _, c := range list["cases"].([]any) {
		if m, ok := c.(map[string]any); ok {
			if name, ok := m["name"].(string); ok {
				held[name] = true
			}
		}
	}
	work := make(chan int)
	errs := make(chan error, len(r.o.Items))
	var wg sync.WaitGroup
	for range checkConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				errs <- r.check(ctx, p, i)
			}
		}()
	}
	for i, it := range r.o.Items {
		if !held[it.Name] {
			p.cases[i] = binding{absent: it.Case == nil}
			continue
		}
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	var first error
	for err := range errs {
		if err != nil && (first == nil || fault.CodeOf(err) == fault.CodeCaseNameConflict) {
			first = err
		}
	}
	return first
}

// refusesSuite reports a set-up failure that is not the phone's: the
// suite as a whole cannot run (a case name conflict, an interrupt).
func refusesSuite(e *fault.Error) bool {
	return e.Code == fault.CodeCaseNameConflict || e.Kind == fault.Interrupted
}

// describe reads the phone's model and Android version ("" when the
// phone does not say).
func describe(ctx context.Context, d *device.Device) (model, android string) {
	out, _, code, err := d.Transport().Shell(ctx, "getprop ro.product.model; getprop ro.build.version.release")
	if err != nil || code != 0 {
		return "", ""
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 0 {
		model = strings.TrimSpace(lines[0])
	}
	if len(lines) > 1 {
		android = strings.TrimSpace(lines[1])
	}
	return model, android
}

// probeBudget bounds the check of a phone after an infrastructure failure.
const probeBudget = 10 * time.Second

var errProbeBudget = errors.New("the phone did not answer the check within 10 s")

// maxInfraInARow retires a phone after this many infrastructure failures
// in a row, however well it answers a probe: a phone that cannot run any
// case would use up every case's budget.
const maxInfraInARow = 3

// fitness says why a phone must stop taking cases after an
// infrastructure failure (infra) or a run timeout, or nil: it must answer
// a shell command and run no replay (our cancelled one included: one that
// keeps going makes every later verdict on the phone unattributable), and
// not have failed maxInfraInARow attempts in a row.
func (r *runner) fitness(ctx context.Context, p *phone, infra bool) *suitereport.Problem {
	if infra {
		p.infraRun++
	}
	if ctx.Err() != nil {
		return nil
	}
	pctx, cancel := clock.WithTimeout(ctx, p.d.Clock(), probeBudget, errProbeBudget)
	defer cancel()
	if _, _, _, err := p.d.Transport().Shell(pctx, "echo ok"); err != nil {
		return &suitereport.Problem{Code: fault.CodePhoneDropped, Message: "the phone stopped answering: " + errText(err)}
	}
	st, err := replay.FetchReplayStatus(pctx, p.d)
	if err != nil {
		return &suitereport.Problem{Code: fault.CodePhoneDropped, Message: "SoloPi on the phone stopped answering: " + errText(err)}
	}
	if st.Active {
		return &suitereport.Problem{Code: fault.CodePhoneBusy, Message: "a replay keeps running on the phone (run " + st.RunID + ")"}
	}
	if p.infraRun >= maxInfraInARow {
		return &suitereport.Problem{Code: fault.CodePhoneUnhealthy, Message: "the phone failed " + strconv.Itoa(p.infraRun) + " attempts in a row for infrastructure reasons"}
	}
	return nil
}

// retire takes a phone out of the suite.
func (r *runner) retire(p *phone, why *suitereport.Problem) {
	r.mu.Lock()
	r.report.Devices[p.index].Retired = why
	r.mu.Unlock()
	r.progress(Event{Serial: p.serial, Phase: "retired", Message: why.String()})
}

// errText is an error's code and message.
func errText(err error) string {
	e := fault.From(err)
	if e.Code == fault.CodeInternalError {
		return e.Message
	}
	return e.Code + ": " + e.Message
}

// isNotFound reports the device's case_not_found.
func isNotFound(err error) bool { return fault.CodeOf(err) == protocol.ErrCaseNotFound }
