package controlplane

import (
	"net/http"

	"github.com/solopi-dev/solopi/managed"
)

func (s *server) health(r *http.Request) (any, error) { return s.cfg.Store.Health(r.Context()) }

func (s *server) listDevices(r *http.Request) (any, error) {
	ds, err := s.cfg.Store.Devices(r.Context())
	if ds == nil {
		ds = []managed.Device{}
	}
	return map[string]any{"devices": ds}, err
}

func (s *server) registerDevice(r *http.Request) (any, error) {
	b, err := body(r)
	if err != nil {
		return nil, err
	}
	spec, err := managed.DeviceSpecFromJSON(b)
	if err != nil {
		return nil, err
	}
	return s.cfg.Store.RegisterDevice(r.Context(), spec)
}

// submit validates the plan as the CLI does, then creates the task; a
// generated owner token is in this one response and nowhere else, ever.
func (s *server) submit(r *http.Request) (any, error) {
	b, err := body(r)
	if err != nil {
		return nil, err
	}
	sub, err := managed.SubmissionFromJSON(b)
	if err != nil {
		return nil, err
	}
	if err := s.cfg.ValidatePlan(sub.Plan); err != nil {
		return nil, err
	}
	return s.cfg.Store.Submit(r.Context(), sub)
}

func (s *server) status(r *http.Request) (any, error) {
	return s.cfg.Store.Status(r.Context(), r.PathValue("id"))
}

func (s *server) events(r *http.Request) (any, error) {
	after, err := managed.EventCursor(r.URL.Query().Get("after"))
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	evs, err := s.cfg.Store.Events(r.Context(), id, after)
	return map[string]any{"taskId": id, "events": evs}, err
}

// report answers 200 for any known task: the verdict is in exitCode.
func (s *server) report(r *http.Request) (any, error) {
	return s.cfg.Store.Report(r.Context(), r.PathValue("id"))
}

func (s *server) cancel(r *http.Request) (any, error) {
	b, err := body(r)
	if err != nil {
		return nil, err
	}
	token, err := managed.OwnerTokenFromJSON(b)
	if err != nil {
		return nil, err
	}
	return s.cfg.Store.Cancel(r.Context(), r.PathValue("id"), token)
}

func (s *server) recover(r *http.Request) (any, error) {
	if _, err := body(r); err != nil {
		return nil, err
	}
	return s.cfg.Store.Recover(r.Context())
}

func (s *server) purge(r *http.Request) (any, error) {
	if _, err := body(r); err != nil {
		return nil, err
	}
	return managed.Purge(r.Context(), s.cfg.Store, s.cfg.Host, s.cfg.ArtifactsRoots)
}
