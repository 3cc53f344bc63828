package report

// render returns the report of dir without writing it: the tests read
// what Write would publish.
func render(dir string, o Options) ([]byte, Kind, error) {
	e, err := openEvidence(dir)
	if err != nil {
		return nil, "", err
	}
	defer e.close()
	k, err := e.detect(o)
	if err != nil {
		return nil, "", err
	}
	b, err := e.render(k, o)
	return b, k, err
}
