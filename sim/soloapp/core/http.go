package core

// params are the decoded query parameters of one request.
type Params map[string]string

func (q Params) Has(k string) bool { _, ok := q[k]; return ok }
