package shell

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"hash"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Text commands of the simulated shell: checksums, wc, head, tail, grep.

func hashCmd(newHash func() hash.Hash) Command {
	return func(sc *Proc, args []string) int {
		_, ops, _ := SplitFlags(args, "")
		name := "sha256sum"
		if newHash().Size() == md5.Size {
			name = "md5sum"
		}
		return eachInput(sc, name, ops, func(label string, r io.Reader) {
			h := newHash()
			_, _ = io.Copy(h, r)
			sc.Outf("%s  %s\n", hex.EncodeToString(h.Sum(nil)), label)
		})
	}
}

func cmdWc(sc *Proc, args []string) int {
	flags, ops, _ := SplitFlags(args, "")
	return eachInput(sc, "wc", ops, func(label string, r io.Reader) {
		data, _ := io.ReadAll(r)
		counts := map[byte]int{'l': bytes.Count(data, []byte("\n")), 'w': len(bytes.Fields(data)), 'c': len(data)}
		var parts []string
		for _, c := range []byte("lwc") {
			if len(flags) == 0 || has(flags, c) {
				parts = append(parts, strconv.Itoa(counts[c]))
			}
		}
		if label != "-" {
			parts = append(parts, label)
		}
		sc.Outf("%s\n", strings.Join(parts, " "))
	})
}

func lineCount(flags map[byte]string) int {
	if v, err := strconv.Atoi(flags['n']); err == nil {
		return v
	}
	return 10
}

func cmdHead(sc *Proc, args []string) int {
	flags, ops, _ := SplitFlags(args, "nc")
	n := lineCount(flags)
	return eachInput(sc, "head", ops, func(_ string, r io.Reader) {
		if c, err := strconv.Atoi(flags['c']); err == nil {
			_, _ = io.CopyN(sc.Stdout, r, int64(c))
			return
		}
		s := bufio.NewScanner(r)
		s.Buffer(nil, 1<<24)
		for i := 0; i < n && s.Scan(); i++ {
			sc.Outf("%s\n", s.Text())
		}
	})
}

func cmdTail(sc *Proc, args []string) int {
	flags, ops, _ := SplitFlags(args, "nc")
	n := lineCount(flags)
	return eachInput(sc, "tail", ops, func(_ string, r io.Reader) {
		data, _ := io.ReadAll(r)
		lines := strings.SplitAfter(string(data), "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		sc.Outf("%s", strings.Join(lines, ""))
	})
}

func cmdGrep(sc *Proc, args []string) int {
	flags, ops, _ := SplitFlags(args, "e")
	pattern, ok := flags['e']
	if !ok {
		if len(ops) == 0 {
			sc.Errf("grep: Needs 1 argument\n")
			return 2
		}
		pattern, ops = ops[0], ops[1:]
	}
	if has(flags, 'F') {
		pattern = regexp.QuoteMeta(pattern)
	}
	if has(flags, 'i') {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		sc.Errf("grep: bad regex '%s'\n", pattern)
		return 2
	}
	matched := 0
	rc := eachInput(sc, "grep", ops, func(label string, r io.Reader) {
		s := bufio.NewScanner(r)
		s.Buffer(nil, 1<<24)
		for s.Scan() {
			if re.MatchString(s.Text()) != has(flags, 'v') {
				matched++
				if !has(flags, 'q') && !has(flags, 'c') {
					sc.Outf("%s\n", s.Text())
				}
			}
		}
	})
	if has(flags, 'c') {
		sc.Outf("%d\n", matched)
	}
	switch {
	case rc != 0:
		return 2
	case matched == 0:
		return 1
	}
	return 0
}
