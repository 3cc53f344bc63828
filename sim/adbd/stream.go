package adbd

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
)

// errStreamClosed is returned by writes to a stream that either side closed.
var errStreamClosed = errors.New("adbd: stream closed")

// stream is one open service on a transport connection, seen by the service
// as a plain io.ReadWriteCloser. It implements the transport's flow control
// in both directions:
//
//   - outgoing: a WRTE may only be sent once the host acknowledged the
//     previous one with OKAY (no delayed_ack), so Write waits on ready;
//   - incoming: the host may not send the next WRTE until we OKAY the last
//     one, and we do so only once the service has read all of it, which gives
//     the host back-pressure instead of unbounded buffering here.
type stream struct {
	c      *transportConn
	local  uint32 // our id, arg0 of what we send
	remote uint32 // the host's id
	ctx    context.Context
	cancel context.CancelFunc

	ready chan struct{} // capacity 1: set when the host may take a WRTE
	wmu   sync.Mutex    // one Write at a time keeps chunks in order

	mu     sync.Mutex
	queue  [][]byte      // unread WRTE payloads; each owes the host an OKAY
	notify chan struct{} // capacity 1: queue or closed changed
	closed bool          // CLSE sent or received
}

func newStream(ctx context.Context, c *transportConn, local, remote uint32) *stream {
	ctx, cancel := context.WithCancel(ctx)
	s := &stream{
		c: c, local: local, remote: remote, ctx: ctx, cancel: cancel,
		ready:  make(chan struct{}, 1),
		notify: make(chan struct{}, 1),
	}
	// The OPEN counts as the host's first READY: we may WRTE right after
	// our OKAY.
	s.ready <- struct{}{}
	return s
}

func (s *stream) signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// onOkay records the host's acknowledgement of our last WRTE. Duplicate
// OKAYs collapse into one, so a confused host cannot make us overrun it.
func (s *stream) onOkay() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// onWrite queues a payload from the host. It never blocks: the transport's
// read loop serves every stream and must not wait for one slow service.
func (s *stream) onWrite(data []byte) {
	if len(data) == 0 {
		s.c.send(message{Command: cmdOKAY, Arg0: s.local, Arg1: s.remote})
		return
	}
	s.mu.Lock()
	s.queue = append(s.queue, data)
	s.mu.Unlock()
	s.signal()
}

// Read returns the host's bytes in order. Data that arrived before a CLSE is
// still delivered, then io.EOF.
func (s *stream) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			head := s.queue[0]
			n := copy(p, head)
			consumed := n == len(head)
			if consumed {
				s.queue[0] = nil
				s.queue = s.queue[1:]
			} else {
				s.queue[0] = head[n:]
			}
			closed := s.closed
			s.mu.Unlock()
			if consumed && !closed {
				s.c.send(message{Command: cmdOKAY, Arg0: s.local, Arg1: s.remote})
			}
			return n, nil
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return 0, io.EOF
		}
		select {
		case <-s.notify:
		case <-s.ctx.Done():
			s.mu.Lock()
			empty := len(s.queue) == 0
			s.mu.Unlock()
			if empty {
				return 0, io.EOF
			}
		}
	}
}

// Write sends p as WRTE messages no larger than the negotiated maximum,
// each waiting for the host's OKAY of the previous one.
func (s *stream) Write(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	written := 0
	for len(p) > 0 {
		select {
		case <-s.ready:
		case <-s.ctx.Done():
			return written, errStreamClosed
		}
		if s.ctx.Err() != nil {
			return written, errStreamClosed
		}
		n := min(len(p), int(s.c.maxData()))
		if err := s.c.send(message{Command: cmdWRTE, Arg0: s.local, Arg1: s.remote, Data: p[:n]}); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

// Close ends the stream from our side: CLSE to the host, and the stream is
// forgotten so late OKAY/WRTE/CLSE for it are ignored.
func (s *stream) Close() error {
	s.shutdown(true)
	return nil
}

// shutdown closes the stream once, whichever side starts. sendClse is false
// when the whole connection is going away and nothing can be sent.
// When the host closed first, our CLSE is the echo adbd sends as well.
func (s *stream) shutdown(sendClse bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.signal()
	s.c.forget(s.local)
	if sendClse {
		s.c.send(message{Command: cmdCLSE, Arg0: s.local, Arg1: s.remote})
	}
}

// isClosedErr reports errors that only say the other side went away.
func isClosedErr(err error) bool {
	return errors.Is(err, errStreamClosed) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, io.EOF)
}
