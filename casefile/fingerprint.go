package casefile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"strconv"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/casefile/paramcrypt"
)

// SnapshotOperationLog renders steps the way SoloPi 1.x's
// ReplaySchemeResolver.snapshotCase does for harness?type=case and for the
// replay fingerprint check: {"steps":[...]} with every operationParam value
// decrypted with seed (a value that does not decrypt stays raw), every
// encrypt flag false, safeEncrypt and storePath absent, null members
// omitted, and keys sorted at every level (bean order plus MapSortField).
// The string is hashed into caseFingerprint byte for byte.
func SnapshotOperationLog(steps []Step, seed string) (string, error) {
	list := make([]any, len(steps))
	for i, s := range steps {
		list[i] = snapshotStep(s, seed)
	}
	out, err := encodeJSON(map[string]any{"steps": list}, true)
	if err != nil {
		return "", fmt.Errorf("casefile: snapshot operationLog: %w", err)
	}
	return out, nil
}

func snapshotStep(s Step, seed string) map[string]any {
	out := map[string]any{"operationIndex": s.OperationIndex}
	// The device never stores empty ids (import rejects them); treat "" as
	// the Java null it would have been.
	if s.OperationID != "" {
		out["operationId"] = s.OperationID
	}
	if s.StepID != "" {
		out["stepId"] = s.StepID
	}
	method := map[string]any{"encrypt": false}
	if r, ok := enumByDeviceName(s.Method.ActionEnum); ok {
		method["actionEnum"] = r.name
	}
	params := map[string]any{}
	encrypted := s.Method.EncryptedOnDevice()
	for k, v := range s.Method.Params {
		if v == nil {
			continue
		}
		if encrypted {
			params[k] = paramcrypt.DecryptOrRaw(seed, *v)
		} else {
			params[k] = *v
		}
	}
	method["operationParam"] = params
	out["operationMethod"] = method
	if s.Node != nil {
		out["operationNode"] = snapshotNode(s.Node)
	}
	return out
}

func snapshotNode(n *Node) map[string]any {
	out := map[string]any{"depth": n.Depth}
	for k, v := range map[string]*string{
		"xpath": n.XPath, "description": n.Description, "text": n.Text,
		"resourceId": n.ResourceID, "id": n.ID, "className": n.ClassName,
		"packageName": n.PackageName, "nodeType": n.NodeType,
	} {
		if v != nil {
			out[k] = *v
		}
	}
	if n.NodeBound != nil {
		out["nodeBound"] = n.NodeBound.tree()
	}
	// The Java bean initialises both collections, so a node without them
	// still serialises [] and {}.
	out["assistantNodes"] = snapshotAssistantNodes(n.AssistantNodes)
	extra := map[string]any{}
	for k, v := range n.Extra {
		extra[k] = v
	}
	out["extra"] = extra
	return out
}

// snapshotAssistantNodes re-serialises helper nodes as the AssistantNode
// bean does: only className, description, parentHeight, resourceId, text.
func snapshotAssistantNodes(raw json.RawMessage) []any {
	out := []any{}
	if raw == nil {
		return out
	}
	g, err := canonjson.Decode(raw)
	if err != nil {
		return out
	}
	list, _ := g.([]any)
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			out = append(out, nil)
			continue
		}
		a := map[string]any{"parentHeight": 0}
		if v, ok := intValue(m["parentHeight"]); ok {
			a["parentHeight"] = v
		}
		for _, k := range []string{"className", "description", "resourceId", "text"} {
			switch x := m[k].(type) {
			case string:
				a[k] = x
			case json.Number:
				a[k] = x.String()
			case bool:
				a[k] = strconv.FormatBool(x)
			}
		}
		out = append(out, a)
	}
	return out
}

// FingerprintInput holds the 11 fingerprinted fields. nil means Java null.
// OperationLog must be the snapshot string (SnapshotOperationLog), not the
// stored {"storePath":...} document.
type FingerprintInput struct {
	ID               *int64
	CaseName         *string
	CaseDesc         *string
	TargetAppPackage *string
	TargetAppLabel   *string
	RecordMode       *string
	AdvanceSettings  *string
	OperationLog     *string
	Priority         *int64
	GmtCreate        *int64
	GmtModify        *int64
}

// Fingerprint is caseFingerprint (docs/file-formats.md#case-fingerprint):
// SHA-256 over the 11 fields in order, each fed as 0xFF when null, else as
// the decimal byte length of its UTF-8 form, ':', and the bytes. The length
// prefix makes the encoding unambiguous, so no two different cases collide by
// concatenation. Returns 64 lowercase hex characters.
func Fingerprint(in FingerprintInput) string {
	h := sha256.New()
	feedInt(h, in.ID)
	for _, s := range []*string{in.CaseName, in.CaseDesc, in.TargetAppPackage, in.TargetAppLabel, in.RecordMode, in.AdvanceSettings, in.OperationLog} {
		feedString(h, s)
	}
	feedInt(h, in.Priority)
	feedInt(h, in.GmtCreate)
	feedInt(h, in.GmtModify)
	return hex.EncodeToString(h.Sum(nil))
}

func feedString(h hash.Hash, s *string) {
	if s == nil {
		h.Write([]byte{0xFF})
		return
	}
	h.Write([]byte(strconv.Itoa(len(*s))))
	h.Write([]byte{':'})
	h.Write([]byte(*s))
}

func feedInt(h hash.Hash, v *int64) {
	if v == nil {
		h.Write([]byte{0xFF})
		return
	}
	s := strconv.FormatInt(*v, 10)
	feedString(h, &s)
}
