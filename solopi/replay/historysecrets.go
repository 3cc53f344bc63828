package replay

// A replay history record quotes the case it ran: a failed step's
// exceptionMessage, its running.log and, in SoloPi's own records, the
// replayed steps (steps.json) and their outcomes (actions.json), all with
// the parameters decrypted. replay-history-list and -get hide the case's
// secrets in them as a run hides them in its evidence: the values at the
// positions case-import recorded, else the input-bearing parameters, of
// the case read back by its name, and the input-bearing (or still
// encrypted) values of the record's own steps. When neither the case nor
// the record's steps can be read, the secrets cannot be known, so the
// record's device texts are withheld.

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/casefile/paramcrypt"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/redact"
	"github.com/solopi-dev/solopi/solopi/device"
)

// historyWithheld is the reason of a history content withheld because its
// case's secrets are unknown.
const historyWithheld = "secrets_unknown"

// historyRecords are the records of a history answer that quote device
// text: every record of a list that has an exceptionMessage, or the one
// record of a detail answer.
func historyRecords(obj map[string]any) []map[string]any {
	list, isList := obj["records"].([]any)
	if !isList {
		return []map[string]any{obj}
	}
	var out []map[string]any
	for _, x := range list {
		if r, ok := x.(map[string]any); ok && device.WireObject(r).Str("exceptionMessage") != "" {
			out = append(out, r)
		}
	}
	return out
}

// recordCaseName is the case a history record ran.
func recordCaseName(r map[string]any) string {
	if name := device.WireObject(r).Str("caseName"); name != "" {
		return name
	}
	info, _ := r["info"].(map[string]any)
	return device.WireObject(info).Str("caseName")
}

// redactHistory returns obj (a history list or detail answer, or an error's
// details about one) with the secrets of the cases it quotes hidden.
func redactHistory(ctx context.Context, d *device.Device, store SecretsStore, obj map[string]any) map[string]any {
	records := historyRecords(obj)
	if len(records) == 0 {
		return obj
	}
	var secrets []string
	known := map[string]bool{}
	for _, r := range records {
		own, ok := recordStepSecrets(r)
		secrets = append(secrets, own...)
		name := recordCaseName(r)
		if _, looked := known[name]; looked || name == "" {
			known[name] = known[name] || ok
			continue
		}
		ci, err := GetCase(ctx, d, name)
		if err == nil {
			_, values := caseSecrets(store, nil, ci)
			secrets = append(secrets, values...)
		}
		known[name] = err == nil || ok
	}
	out, _ := redact.New(withDeviceSpellings(secrets)...).Value(obj).(map[string]any)
	withhold(out, known)
	return out
}

// withhold replaces the device texts of every record whose case's secrets
// are unknown.
func withhold(obj map[string]any, known map[string]bool) {
	visit := func(r map[string]any) {
		if known[recordCaseName(r)] {
			return
		}
		if _, ok := r["exceptionMessage"].(string); ok {
			r["exceptionMessage"] = redact.Marker
		}
		if info, ok := r["info"].(map[string]any); ok {
			if _, ok := info["exceptionMessage"].(string); ok {
				info["exceptionMessage"] = redact.Marker
			}
		}
		if log, ok := r["log"].(map[string]any); ok {
			if _, ok := log["text"].(string); ok {
				rest := maps.Clone(log)
				delete(rest, "text")
				r["log"] = canonjson.Overlay{Base: rest, Fields: withheldLog{Redacted: historyWithheld, Text: redact.Marker}}
			}
		}
		for _, k := range []string{"steps", "actions"} {
			if f, ok := r[k].(map[string]any); ok {
				if _, has := f["content"]; has {
					rest := maps.Clone(f)
					delete(rest, "content")
					r[k] = canonjson.Overlay{Base: rest, Fields: withheldContent{Omitted: true, Reason: historyWithheld}}
				}
			}
		}
	}
	if list, ok := obj["records"].([]any); ok {
		for _, x := range list {
			if r, ok := x.(map[string]any); ok && device.WireObject(r).Str("exceptionMessage") != "" {
				visit(r)
			}
		}
		return
	}
	visit(obj)
}

// withheldLog is laid over a record's log object whose text is withheld.
type withheldLog struct {
	Redacted string `json:"redacted"`
	Text     string `json:"text"`
}

// withheldContent is laid over a record's steps or actions file object
// whose content is withheld, spelled as SoloPi spells content it omits
// (contentAvailable false, omitted true, a reason).
type withheldContent struct {
	ContentAvailable bool   `json:"contentAvailable"`
	Omitted          bool   `json:"omitted"`
	Reason           string `json:"reason"`
}

// recordStepSecrets are the secrets of the steps a detail record carries
// (steps.json: a list of steps or {"steps": [...]}): the input-bearing
// values and those still encrypted (in the stored and the default-seed
// decrypted form). ok reports that the record carried readable steps.
func recordStepSecrets(r map[string]any) ([]string, bool) {
	f, _ := r["steps"].(map[string]any)
	content := f["content"]
	if m, isObj := content.(map[string]any); isObj {
		content = m["steps"]
	}
	list, isList := content.([]any)
	if !isList {
		return nil, false
	}
	c := &casefile.Case{}
	for _, x := range list {
		b, err := json.Marshal(x)
		if err != nil {
			continue
		}
		if s, err := casefile.ParseStep(b); err == nil {
			c.Steps = append(c.Steps, s)
		}
	}
	values := casefile.ParamValues(c, casefile.InputParams(c))
	for _, v := range casefile.ParamValues(c, casefile.EncryptedParams(c)) {
		values = append(values, v, paramcrypt.DecryptOrRaw(paramcrypt.DefaultSeed, v))
	}
	slices.Sort(values)
	return slices.Compact(values), true
}

// redactHistoryError hides the secrets of an error's details that quote
// a history answer (a contract violation prints the answer).
func redactHistoryError(ctx context.Context, d *device.Device, store SecretsStore, err error) error {
	e, ok := err.(*fault.Error)
	if !ok || e.Details == nil {
		return err
	}
	for _, k := range []string{"lastResponse", "response"} {
		if m, ok := e.Details[k].(map[string]any); ok {
			e.Details[k] = redactHistory(ctx, d, store, m)
		}
	}
	return e
}
