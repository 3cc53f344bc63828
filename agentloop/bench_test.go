package agentloop

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	xdraw "golang.org/x/image/draw"

	"github.com/solopi-dev/solopi/agentloop/action"
	"github.com/solopi-dev/solopi/agentloop/chat"
	"github.com/solopi-dev/solopi/agentloop/coord"
	"github.com/solopi-dev/solopi/agentloop/fakemodel"
	"github.com/solopi-dev/solopi/redact"
)

// BenchmarkStepOverhead measures the runtime's own cost per step with an
// instant in-memory model and a device whose frames are pre-encoded:
// planning request, parse, contract mapping, freshness re-observation and
// comparison, dispatch bookkeeping, post-action verification and events.
// The model's latency is excluded by construction.
func BenchmarkStepOverhead(b *testing.B) {
	// Reset taps the same place and never changes the screen, so every
	// step is a full tap cycle on identical frames.
	model := &scriptModel{plans: []string{`do(action="Tap", element=[296,515], reason="tap the left button")`}}
	dev := &counterDevice{}
	a, err := New(Config{Space: coord.SpaceRelative, RepeatLimit: 1 << 30}, dev, model)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	task := Task{Goal: "benchmark", MaxSteps: 1 << 30, MaxDuration: time.Hour}
	if _, err := a.Step(ctx, task); err != nil { // warm-up: contract, caches
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		model.calls = model.calls[:0]
		sr, err := a.Step(ctx, task)
		if err != nil || sr.Terminal {
			b.Fatalf("%+v %v", sr, err)
		}
	}
}

// BenchmarkCompareFrames compares two 1080×2400 frames (content region,
// bars cropped), the pixel work done before and after every action.
func BenchmarkCompareFrames(b *testing.B) {
	render := func(v string) *Screen {
		c := fakemodel.NewCanvas(1080, 2400, 63)
		c.Box("text", image.Rect(340, 640, 740, 880), v)
		c.Box("button", image.Rect(560, 1120, 960, 1290), "+1")
		s, err := ScreenFromImage(c.Img, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	x, y := render("1"), render("2")
	b.SetBytes(int64(len(x.Image.Pix)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := compareContent(x, y)
		if d.Changed == 0 {
			b.Fatal("no change found")
		}
	}
}

// BenchmarkCompareFramesAllRowsDiffer is the worst case: every row
// differs (a scrolled list), so no row can be skipped.
func BenchmarkCompareFramesAllRowsDiffer(b *testing.B) {
	x := image.NewRGBA(image.Rect(0, 0, 1080, 2400))
	y := image.NewRGBA(image.Rect(0, 0, 1080, 2400))
	for i := range x.Pix {
		x.Pix[i] = byte(i * 7)
		y.Pix[i] = byte(i*7 + 40)
	}
	sx, sy := &Screen{Image: x}, &Screen{Image: y}
	b.SetBytes(int64(len(x.Pix)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d := compareContent(sx, sy); d.Changed == 0 {
			b.Fatal("no change found")
		}
	}
}

// benchFrames are 1080×2340 screens: the simulator's counter (flat
// colours and text, the best case for PNG) and a feed-like screen whose
// upper half is a photo (smooth shading with sensor-like grain, which PNG
// cannot compress and JPEG is made for) above a list of labelled rows.
func benchFrames() map[string]*image.RGBA {
	photo := fakemodel.NewCanvas(1080, 2340, 63)
	rng := rand.New(rand.NewPCG(1, 2))
	for y := 63; y < 1100; y++ {
		for x := 0; x < 1080; x++ {
			o := photo.Img.PixOffset(x, y)
			shade := 90 + 60*math.Sin(float64(x)/97) + 40*math.Cos(float64(y)/61)
			for c := 0; c < 3; c++ {
				v := shade + float64(c*25) + rng.NormFloat64()*6
				photo.Img.Pix[o+c] = uint8(max(0, min(255, v)))
			}
		}
	}
	for i := 0; i < 7; i++ {
		photo.Box("item", image.Rect(40, 1130+i*160, 1040, 1270+i*160), "Row "+strconv.Itoa(i)+" of the feed")
	}
	return map[string]*image.RGBA{"flat-ui": fakemodel.CounterScreen("3"), "photo-feed": photo.Img}
}

// BenchmarkEncodeModelImage encodes a frame as sent to the model, at full
// size and at the default resize (591×1280), as PNG and as JPEG 85; the
// encoded size is reported as bytes/frame.
func BenchmarkEncodeModelImage(b *testing.B) {
	for name, frame := range benchFrames() {
		small := image.NewRGBA(image.Rect(0, 0, 591, 1280))
		xdraw.ApproxBiLinear.Scale(small, small.Rect, frame, frame.Rect, xdraw.Src, nil)
		for _, img := range []*image.RGBA{frame, small} {
			for _, enc := range []chat.ImageEncoding{{Format: chat.ImagePNG}, chat.DefaultImageEncoding()} {
				b.Run(fmt.Sprintf("%s/%dx%d/%s", name, img.Rect.Dx(), img.Rect.Dy(), enc), func(b *testing.B) {
					var n int
					for i := 0; i < b.N; i++ {
						mi, err := chat.EncodeImage(img, enc, nil)
						if err != nil {
							b.Fatal(err)
						}
						n = len(mi.Data)
					}
					b.ReportMetric(float64(n), "bytes/frame")
				})
			}
		}
	}
}

// BenchmarkChatOverhead is the client's own cost of one planning request
// per provider style: building the JSON body with the base64 image (a
// 591×1280 JPEG 85 frame), the HTTP exchange on loopback, and reading the
// answer (one JSON object, content parts, or 40 server-sent deltas). The
// endpoint answers at once with a canned reply, so the figure is the
// per-step overhead that comes on top of the model's latency.
func BenchmarkChatOverhead(b *testing.B) {
	answer := `do(action="Tap", element=[703,515], screen_description="The counter shows 2.", reason="Tap +1 to reach 3.")`
	js, _ := json.Marshal(answer)
	jsonReply := `{"choices":[{"index":0,"finish_reason":"stop","message":{"content":` + string(js) + `}}],"usage":{"prompt_tokens":1200,"completion_tokens":40,"total_tokens":1240}}`
	half := len(answer) / 2
	p1, _ := json.Marshal(answer[:half])
	p2, _ := json.Marshal(answer[half:])
	partsReply := `{"choices":[{"index":0,"finish_reason":"stop","message":{"content":[{"type":"text","text":` + string(p1) + `},{"type":"text","text":` + string(p2) + `}]}}],"usage":{"prompt_tokens":1200,"completion_tokens":40,"total_tokens":1240}}`
	var sse strings.Builder
	for i := 0; i < len(answer); i += 3 {
		d, _ := json.Marshal(answer[i:min(i+3, len(answer))])
		sse.WriteString(`data: {"choices":[{"index":0,"delta":{"content":` + string(d) + `},"finish_reason":null}]}` + "\n\n")
	}
	sse.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
		`data: {"choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":40,"total_tokens":1240}}` + "\n\ndata: [DONE]\n\n")
	var reqBytes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		reqBytes.Store(n)
		switch {
		case r.Header.Get("Accept") == "text/event-stream":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, sse.String())
		case strings.Contains(r.URL.Path, "/parts/"):
			io.WriteString(w, partsReply)
		default:
			io.WriteString(w, jsonReply)
		}
	}))
	defer srv.Close()
	small := image.NewRGBA(image.Rect(0, 0, 591, 1280))
	frame := fakemodel.CounterScreen("2")
	xdraw.ApproxBiLinear.Scale(small, small.Rect, frame, frame.Rect, xdraw.Src, nil)
	img, err := chat.EncodeImage(small, chat.DefaultImageEncoding(), nil)
	if err != nil {
		b.Fatal(err)
	}
	var mem memory
	mem.goal = "increase the counter to 3"
	for i := 0; i < 3; i++ {
		mem.addTurn(i+1, action.Action{Name: action.Tap, Reason: "tap +1", ScreenDescription: "the counter"}, map[string]any{"command_dispatched": true, "observable_effect": "changed"})
	}
	contract := coord.Contract{Space: coord.SpaceRelative, Frame: coord.Frame{ImageWidth: 591, ImageHeight: 1280, DisplayWidth: 1080, DisplayHeight: 2340}}
	req := mem.planRequest(time.Now(), 4, contract, img, 0, nil, "")
	for _, mode := range []struct {
		name   string
		adjust func(*chat.Config)
	}{
		{"openai-json", func(*chat.Config) {}},
		{"parts", func(mc *chat.Config) { mc.BaseURL = srv.URL + "/parts/v1" }},
		{"stream", func(mc *chat.Config) { mc.Stream = true }},
		{"azure", func(mc *chat.Config) {
			mc.BaseURL, mc.APIStyle, mc.APIVersion = srv.URL+"/openai/deployments/d", chat.APIStyleAzure, "2024-10-21"
		}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			mc := chat.DefaultConfig()
			mc.BaseURL, mc.Model, mc.APIKey = srv.URL+"/v1", "m", redact.NewSecret(testAPIKey)
			mode.adjust(&mc)
			m, err := chat.NewClient(mc)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				resp, err := m.Chat(ctx, req)
				if err != nil || resp.Content != answer {
					b.Fatalf("%v %+v", err, resp)
				}
			}
			b.ReportMetric(float64(reqBytes.Load()), "req-bytes")
		})
	}
}
