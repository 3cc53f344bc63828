package verify

import (
	"fmt"
	"strconv"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
)

// Schema versions.
const (
	requirementSchema = "solopi.ai.requirement/v1"
	normalizedSchema  = "solopi.ai.normalized-requirement/v1"
	intentSchema      = "solopi.ai.test-intent/v1"
	planSchema        = "solopi.ai.verification-plan/v1"
	reportSchema      = "solopi.ai.verification-report/v1"
)

// requirement is the requirement's identity and acceptance criteria.
type requirement struct {
	ID                 string
	Title              string
	Description        string
	AcceptanceCriteria []ac
}

// ac is one acceptance criterion.
type ac struct{ ID, Text string }

func (r requirement) tree() map[string]any {
	acs := make([]any, len(r.AcceptanceCriteria))
	for i, ac := range r.AcceptanceCriteria {
		acs[i] = map[string]any{"id": ac.ID, "text": ac.Text}
	}
	return map[string]any{"id": r.ID, "title": r.Title, "description": r.Description, "acceptanceCriteria": acs}
}

// bindingMap is an object of bindings with its keys in written order.
type bindingMap struct {
	keys   []string
	values map[string]any
}

// flow is a reusable flow: default bindings and raw steps (resolved and
// checked only where a scenario uses it).
type flow struct {
	ID       string
	defaults bindingMap
	steps    []any
	path     string // its place in the document, for errors
}

// scenarioSource is a scenario after the shallow checks of normalization:
// steps, checkpoints, preconditions and cleanup are still raw.
type scenarioSource struct {
	ID                 string
	Title              string
	AcceptanceCriteria []string
	DependsOn          []string
	bindings, testData bindingMap
	preconditions      []any
	steps              []any
	checkpoints        []any
	cleanup            []any
	Budget             Budget
	// requestedRoute, targetAppPackage and targetAppLabel are raw values:
	// they are checked when the scenario compiles.
	requestedRoute   any
	targetAppPackage any
	targetAppLabel   any
	// pointer is the scenario's JSON pointer in the document (flow uses
	// find their call-site bindings' key order through it); path is the
	// same place as errors name it (".scenarios[0]").
	pointer, path string
}

// normalized is a requirement after Normalize: the verify-normalize output
// and what sourceFingerprint hashes.
type normalized struct {
	Requirement requirement
	parameters  bindingMap
	Flows       []flow
	Scenarios   []scenarioSource
	doc         *Document
}

// Normalize checks a requirement's shape and fills defaults, without
// resolving bindings, expanding flows or checking steps and oracles (that
// is compilation's work, as in solopi-ai).
func Normalize(doc *Document) (*normalized, error) {
	src, ok := doc.Tree.(map[string]any)
	if !ok {
		return nil, invalid(fault.CodeInvalidContract, "the requirement document must be an object", "field", "requirement document")
	}
	if v := canonjson.Get(src, "schemaVersion", requirementSchema); v != requirementSchema {
		return nil, invalid(fault.CodeUnsupportedSchema, "unsupported requirement schema", "schemaVersion", v)
	}
	req, reqPath := src, ""
	if v := canonjson.Get(src, "requirement", nil); v != nil {
		m, err := want.Object(v, "requirement")
		if err != nil {
			return nil, at(err, ".requirement")
		}
		req, reqPath = m, ".requirement"
	}
	n := &normalized{doc: doc}
	var err error
	if n.Requirement.ID, err = identifier(canonjson.Get(req, "id", canonjson.Get(req, "requirementId", nil)), "requirement id"); err != nil {
		return nil, at(err, reqPath+".id")
	}
	if n.Requirement.Title, err = text(canonjson.Get(req, "title", nil), "requirement title"); err != nil {
		return nil, at(err, reqPath+".title")
	}
	desc, ok := canonjson.Get(req, "description", "").(string)
	if !ok {
		return nil, at(invalid(fault.CodeInvalidContract, "the requirement description must be text"), reqPath+".description")
	}
	n.Requirement.Description = desc
	acPath := reqPath + ".acceptanceCriteria"
	if _, ok := req["acceptanceCriteria"]; !ok {
		acPath = ".acceptanceCriteria"
	}
	if n.Requirement.AcceptanceCriteria, err = normalizeACs(canonjson.Get(req, "acceptanceCriteria", canonjson.Get(src, "acceptanceCriteria", nil))); err != nil {
		return nil, at(err, acPath)
	}
	params, ok := canonjson.Get(src, "parameters", map[string]any{}).(map[string]any)
	if !ok {
		return nil, at(invalid(fault.CodeInvalidContract, "parameters must be an object"), ".parameters")
	}
	n.parameters = doc.bindingMap("/parameters", params)

	flows, err := want.List(canonjson.Get(src, "reusableFlows", []any{}), "reusableFlows", true)
	if err != nil {
		return nil, at(err, ".reusableFlows")
	}
	flowIDs := make([]string, 0, len(flows))
	for i, raw := range flows {
		f, err := want.Object(raw, fmt.Sprintf("reusableFlows[%d]", i))
		if err != nil {
			return nil, at(err, fmt.Sprintf(".reusableFlows[%d]", i))
		}
		flow := flow{path: fmt.Sprintf(".reusableFlows[%d]", i)}
		if flow.ID, err = identifier(canonjson.Get(f, "id", nil), "reusable flow id"); err != nil {
			return nil, at(err, fmt.Sprintf(".reusableFlows[%d].id", i))
		}
		defaults, err := want.Object(canonjson.Get(f, "defaults", map[string]any{}), "reusable flow defaults")
		if err != nil {
			return nil, at(err, fmt.Sprintf(".reusableFlows[%d].defaults", i))
		}
		flow.defaults = doc.bindingMap("/reusableFlows/"+strconv.Itoa(i)+"/defaults", defaults)
		if flow.steps, err = want.List(canonjson.Get(f, "steps", nil), "reusable flow steps", false); err != nil {
			return nil, at(err, fmt.Sprintf(".reusableFlows[%d].steps", i))
		}
		n.Flows = append(n.Flows, flow)
		flowIDs = append(flowIDs, flow.ID)
	}
	if err := uniqueIDs(flowIDs, "reusableFlows"); err != nil {
		return nil, at(err, ".reusableFlows")
	}

	scenarios, err := want.List(canonjson.Get(src, "scenarios", nil), "scenarios", false)
	if err != nil {
		return nil, at(err, ".scenarios")
	}
	ids := make([]string, 0, len(scenarios))
	for i, raw := range scenarios {
		sc, err := normalizeScenarioSource(doc, src, raw, i)
		if err != nil {
			return nil, at(err, fmt.Sprintf(".scenarios[%d]", i))
		}
		n.Scenarios = append(n.Scenarios, *sc)
		ids = append(ids, sc.ID)
	}
	if err := uniqueIDs(ids, "scenarios"); err != nil {
		return nil, at(err, ".scenarios")
	}
	return n, nil
}

func (d *Document) bindingMap(pointer string, m map[string]any) bindingMap {
	return bindingMap{keys: d.keys(pointer, m), values: m}
}

func normalizeACs(v any) ([]ac, error) {
	items, err := want.List(v, "acceptanceCriteria", false)
	if err != nil {
		return nil, err
	}
	out := make([]ac, 0, len(items))
	ids := make([]string, 0, len(items))
	for i, item := range items {
		def := fmt.Sprintf("AC-%03d", i+1)
		var ac ac
		if s, ok := item.(string); ok {
			if ac.Text, err = text(s, "AC text"); err != nil {
				return nil, at(err, fmt.Sprintf("[%d]", i))
			}
			ac.ID = def
		} else {
			m, err := want.Object(item, fmt.Sprintf("acceptanceCriteria[%d]", i))
			if err != nil {
				return nil, at(err, fmt.Sprintf("[%d]", i))
			}
			if ac.ID, err = identifier(canonjson.Get(m, "id", def), "AC ID"); err != nil {
				return nil, at(err, fmt.Sprintf("[%d].id", i))
			}
			if ac.Text, err = text(canonjson.Get(m, "text", nil), "AC text"); err != nil {
				return nil, at(err, fmt.Sprintf("[%d].text", i))
			}
		}
		out = append(out, ac)
		ids = append(ids, ac.ID)
	}
	return out, uniqueIDs(ids, "acceptanceCriteria")
}

func normalizeScenarioSource(doc *Document, top map[string]any, raw any, i int) (*scenarioSource, error) {
	m, err := want.Object(raw, fmt.Sprintf("scenarios[%d]", i))
	if err != nil {
		return nil, err
	}
	pointer := "/scenarios/" + strconv.Itoa(i)
	sc := &scenarioSource{pointer: pointer, path: fmt.Sprintf(".scenarios[%d]", i)}
	if sc.ID, err = identifier(canonjson.Get(m, "id", nil), "scenario id"); err != nil {
		return nil, at(err, ".id")
	}
	acRefs, err := want.List(canonjson.Get(m, "acceptanceCriteria", nil), "scenario acceptanceCriteria", false)
	if err != nil {
		return nil, at(err, ".acceptanceCriteria")
	}
	if sc.Title, err = text(canonjson.Get(m, "title", sc.ID), "scenario title"); err != nil {
		return nil, at(err, ".title")
	}
	if sc.AcceptanceCriteria, err = identifiers(acRefs, "scenario AC reference"); err != nil {
		return nil, at(err, ".acceptanceCriteria")
	}
	deps, err := want.List(canonjson.Get(m, "dependsOn", []any{}), "scenario dependsOn", true)
	if err != nil {
		return nil, at(err, ".dependsOn")
	}
	if sc.DependsOn, err = identifiers(deps, "scenario dependency"); err != nil {
		return nil, at(err, ".dependsOn")
	}
	bindings, err := want.Object(canonjson.Get(m, "bindings", map[string]any{}), "scenario bindings")
	if err != nil {
		return nil, at(err, ".bindings")
	}
	sc.bindings = doc.bindingMap(pointer+"/bindings", bindings)
	testData, err := want.Object(canonjson.Get(m, "testData", map[string]any{}), "scenario testData")
	if err != nil {
		return nil, at(err, ".testData")
	}
	sc.testData = doc.bindingMap(pointer+"/testData", testData)
	if sc.preconditions, err = want.List(canonjson.Get(m, "preconditions", []any{}), "scenario preconditions", true); err != nil {
		return nil, at(err, ".preconditions")
	}
	if sc.steps, err = want.List(canonjson.Get(m, "steps", nil), "scenario steps", false); err != nil {
		return nil, at(err, ".steps")
	}
	if sc.checkpoints, err = want.List(canonjson.Get(m, "checkpoints", nil), "scenario checkpoints", false); err != nil {
		return nil, at(err, ".checkpoints")
	}
	if sc.cleanup, err = want.List(canonjson.Get(m, "cleanup", []any{}), "scenario cleanup", true); err != nil {
		return nil, at(err, ".cleanup")
	}
	if sc.Budget, err = normalizeBudget(canonjson.Get(m, "budget", nil), "scenario budget"); err != nil {
		return nil, at(err, ".budget")
	}
	sc.requestedRoute = canonjson.Get(m, "route", "auto")
	sc.targetAppPackage = canonjson.Get(m, "targetAppPackage", canonjson.Get(top, "targetAppPackage", nil))
	sc.targetAppLabel = canonjson.Get(m, "targetAppLabel", canonjson.Get(top, "targetAppLabel", nil))
	return sc, nil
}

// Tree is the normalized requirement as verify-normalize prints it.
func (n *normalized) Tree() map[string]any {
	flows := make([]any, len(n.Flows))
	for i, f := range n.Flows {
		flows[i] = map[string]any{"id": f.ID, "defaults": f.defaults.values, "steps": f.steps}
	}
	scenarios := make([]any, len(n.Scenarios))
	for i, s := range n.Scenarios {
		scenarios[i] = map[string]any{
			"id": s.ID, "title": s.Title,
			"acceptanceCriteria": strs(s.AcceptanceCriteria), "dependsOn": strs(s.DependsOn),
			"bindings": s.bindings.values, "testData": s.testData.values,
			"preconditions": s.preconditions, "steps": s.steps, "checkpoints": s.checkpoints, "cleanup": s.cleanup,
			"budget": s.Budget.tree(), "requestedRoute": s.requestedRoute,
			"targetAppPackage": s.targetAppPackage, "targetAppLabel": s.targetAppLabel,
		}
	}
	return map[string]any{
		"schemaVersion": normalizedSchema,
		"requirement":   n.Requirement.tree(),
		"parameters":    n.parameters.values,
		"reusableFlows": flows,
		"scenarios":     scenarios,
	}
}

// SourceFingerprint is the canonical SHA-256 of the normalized requirement.
func (n *normalized) SourceFingerprint() string { return fingerprint(n.Tree()) }
