package console

import (
	"bufio"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/solopi-dev/solopi/agentloop"
)

// BenchmarkEventLatency is the time from the runtime's event to a viewer
// having read it from the stream (loopback HTTP, one viewer).
func BenchmarkEventLatency(b *testing.B) {
	s, err := Start("bench")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	u, _ := url.Parse(s.URL())
	resp, err := http.Get("http://" + u.Host + "/events?token=" + u.Query().Get("token"))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	next := func() {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if line == "\n" {
				return
			}
			if !strings.HasPrefix(line, "id: ") && !strings.HasPrefix(line, "data: ") {
				b.Fatalf("stream line %q", line)
			}
		}
	}
	next() // the task
	ev := agentloop.AgentEvent{Type: agentloop.EvAction, Step: 1, Phase: agentloop.PhasePlanning, Message: "model proposed Tap",
		Payload: map[string]any{"action": "Tap", "point": []int{540, 1200}}}
	for b.Loop() {
		s.OnEvent(ev)
		next()
	}
}
