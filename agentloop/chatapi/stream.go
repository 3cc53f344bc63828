package chatapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// ReadStream assembles a streamed answer (server-sent events, one JSON
// chunk per data field, ending with "data: [DONE]") into one reply:
// content and reasoning deltas are concatenated in order, the finish
// reason and usage are taken from whichever chunk carries them. An
// endpoint that ignores stream:true and answers one JSON object is read
// as such. At most limit bytes are read.
func ReadStream(r io.Reader, limit int64) (*Reply, error) {
	br := bufio.NewReader(io.LimitReader(r, limit))
	// Sniff: a JSON object instead of events.
	for {
		b, err := br.Peek(1)
		if err != nil {
			return nil, invalid("the model endpoint sent an empty stream", err)
		}
		if b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n' {
			_, _ = br.ReadByte()
			continue
		}
		if b[0] == '{' {
			data, err := io.ReadAll(br)
			if err != nil {
				return nil, invalid("cannot read the answer", err)
			}
			return DecodeJSON(data)
		}
		break
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), int(min(limit, 16<<20))+1)
	reply := &Reply{}
	var data bytes.Buffer
	event := ""
	done, finished := false, false
	dispatch := func() error {
		defer func() { data.Reset(); event = "" }()
		payload := bytes.TrimSpace(data.Bytes())
		if len(payload) == 0 {
			return nil
		}
		if bytes.Equal(payload, []byte("[DONE]")) {
			done = true
			return nil
		}
		if event == "error" {
			if e := decodeErrorField(payload); e != nil {
				return &StreamError{API: *e}
			}
		}
		var chunk body
		if err := json.Unmarshal(payload, &chunk); err != nil {
			return invalid("the model endpoint streamed a malformed chunk", err)
		}
		if e := decodeErrorField(chunk.Error); e != nil {
			return &StreamError{API: *e}
		}
		if chunk.Model != "" {
			reply.Model = chunk.Model
		}
		if chunk.Usage != nil {
			reply.Usage = chunk.Usage
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			reply.Choices = max(reply.Choices, 1)
			// A chunk carries a delta; a few servers send the whole
			// message in the last one instead.
			if err := reply.add(c.Delta); err != nil {
				return err
			}
			if err := reply.add(c.Message); err != nil {
				return err
			}
			if c.FinishReason != nil && *c.FinishReason != "" {
				reply.FinishReason, finished = *c.FinishReason, true
			}
		}
		return nil
	}
	for !done && sc.Scan() {
		line := sc.Text()
		if line == "" {
			if err := dispatch(); err != nil {
				return nil, err
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // a comment (keep-alive)
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(value)
		case "event":
			event = value
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, invalid("a streamed event is too large", err)
		}
		return nil, invalid("cannot read the stream", err)
	}
	// The last event may lack its blank line.
	if !done {
		if err := dispatch(); err != nil {
			return nil, err
		}
	}
	if !done && !finished {
		return nil, invalid("the stream ended before the answer was complete", nil)
	}
	return reply, nil
}
