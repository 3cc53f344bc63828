package perfmetric

import "testing"

func TestOfNamesSoloPiSeriesInBothLanguages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, source, key, english string }{
		{"帧率", "FPS", "fps", "frame rate"},
		{"Frame Rate", "FPS", "fps", "frame rate"},
		{"全局占用", "CPU", "cpu_global", "device CPU usage"},
		{"全局占用", "Memory", "memory_global", "device memory in use"},
		{"应用进程-com.example.counter", "CPU", "cpu", "app CPU usage"},
		{"App Process-com.example.counter", "VmRSS", "vm_rss", "app resident memory"},
		{"PSS-23572", "Memory", "memory", "app memory (PSS)"},
	} {
		key, en, ok := Of(c.name, c.source)
		if !ok || key != c.key || en != c.english {
			t.Errorf("%s/%s: %q %q %v", c.name, c.source, key, en, ok)
		}
	}
	if _, _, ok := Of("帧率", "CPU"); ok {
		t.Error("a series is matched by its source too")
	}
	seen := map[string]bool{}
	for _, k := range Keys() {
		if seen[k] || Lookup(k) == nil || Lookup(k).Item == "" {
			t.Errorf("key %s", k)
		}
		seen[k] = true
	}
	if Lookup("gpu") != nil || !Lookup("fps").Floor || Lookup("cpu").Floor {
		t.Error("lookup")
	}
}
