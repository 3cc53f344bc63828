package agentloop

import (
	"context"
	"errors"
)

// FirstAnswer asks every confirmer at once and returns the first answer
// given (a terminal and a live console, say): the others' prompts are
// withdrawn by cancelling their context. A confirmer that fails (a closed
// terminal) leaves the question to the rest; the call fails only when all
// of them failed, or when ctx ends.
func FirstAnswer(cs ...Confirmer) Confirmer {
	var live []Confirmer
	for _, c := range cs {
		if c != nil {
			live = append(live, c)
		}
	}
	if len(live) == 1 {
		return live[0]
	}
	return firstAnswer(live)
}

type firstAnswer []Confirmer

func (f firstAnswer) Confirm(ctx context.Context, question string) (bool, error) {
	return f.race(ctx, func(ctx context.Context, c Confirmer) (bool, error) { return c.Confirm(ctx, question) })
}

func (f firstAnswer) TakeOver(ctx context.Context, message string) (bool, error) {
	return f.race(ctx, func(ctx context.Context, c Confirmer) (bool, error) { return c.TakeOver(ctx, message) })
}

func (f firstAnswer) race(ctx context.Context, ask func(context.Context, Confirmer) (bool, error)) (bool, error) {
	if len(f) == 0 {
		return false, errors.New("no confirmer to ask")
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		ok  bool
		err error
	}
	answers := make(chan answer, len(f))
	for _, c := range f {
		go func() {
			ok, err := ask(rctx, c)
			answers <- answer{ok, err}
		}()
	}
	var errs []error
	for range f {
		a := <-answers
		if a.err == nil {
			return a.ok, nil
		}
		errs = append(errs, a.err)
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return false, errors.Join(errs...)
}
