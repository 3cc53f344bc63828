package shell

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/solopi-dev/solopi/sim/android/vfs"
)

func fsCommands() map[string]Command {
	return map[string]Command{
		"mkdir": cmdMkdir, "rm": cmdRm, "rmdir": cmdRmdir, "cat": cmdCat, "ls": cmdLs, "touch": cmdTouch,
		"cp": cmdCp, "mv": cmdMv, "stat": cmdStat, "chmod": cmdChmod,
		"sha256sum": hashCmd(sha256.New), "md5sum": hashCmd(md5.New),
		"wc": cmdWc, "head": cmdHead, "tail": cmdTail, "grep": cmdGrep,
	}
}

// ErrText renders an error like strerror does for toybox messages.
func ErrText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		r := []rune(s)
		r[0] = unicode.ToUpper(r[0])
		return string(r)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// SplitFlags separates single-letter flags from operands; "--" ends flags.
func SplitFlags(args []string, valued string) (flags map[byte]string, ops []string, bad byte) {
	flags = map[byte]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, append(ops, args[i+1:]...), 0
		}
		if len(a) < 2 || a[0] != '-' {
			ops = append(ops, a)
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			if strings.IndexByte(valued, c) >= 0 {
				v := a[j+1:]
				if v == "" && i+1 < len(args) {
					i++
					v = args[i]
				}
				flags[c] = v
				break
			}
			if !unicode.IsLetter(rune(c)) && !unicode.IsDigit(rune(c)) {
				return flags, ops, c
			}
			flags[c] = ""
		}
	}
	return flags, ops, 0
}

func has(flags map[byte]string, c byte) bool { _, ok := flags[c]; return ok }

func cmdMkdir(sc *Proc, args []string) int {
	flags, ops, _ := SplitFlags(args, "m")
	if len(ops) == 0 {
		sc.Errf("mkdir: Needs 1 argument\n")
		return 1
	}
	perm := fs.FileMode(0o771)
	if m, ok := flags['m']; ok {
		v, err := strconv.ParseUint(m, 8, 32)
		if err != nil {
			sc.Errf("mkdir: bad mode '%s'\n", m)
			return 1
		}
		perm = fs.FileMode(v)
	}
	rc := 0
	for _, d := range ops {
		var err error
		if has(flags, 'p') {
			err = sc.sh.FS.MkdirAll(sc.Abs(d), perm)
		} else {
			err = sc.sh.FS.Mkdir(sc.Abs(d), perm)
		}
		if err != nil {
			sc.Errf("mkdir: '%s': %s\n", d, ErrText(err))
			rc = 1
		}
	}
	return rc
}

func cmdRm(sc *Proc, args []string) int {
	flags, ops, _ := SplitFlags(args, "")
	force, rec := has(flags, 'f'), has(flags, 'r') || has(flags, 'R')
	if len(ops) == 0 && !force {
		sc.Errf("rm: Needs 1 argument\n")
		return 1
	}
	rc := 0
	for _, f := range ops {
		full := sc.Abs(f)
		fi, err := sc.sh.FS.Stat(full)
		switch {
		case err != nil:
			if !force {
				sc.Errf("rm: %s: %s\n", f, ErrText(err))
				rc = 1
			}
			continue
		case fi.IsDir() && !rec:
			sc.Errf("rm: %s: Is a directory\n", f)
			rc = 1
			continue
		}
		if rec {
			err = sc.sh.FS.RemoveAll(full)
		} else {
			err = sc.sh.FS.Remove(full)
		}
		if err != nil {
			sc.Errf("rm: %s: %s\n", f, ErrText(err))
			rc = 1
		}
	}
	return rc
}

func cmdRmdir(sc *Proc, args []string) int {
	_, ops, _ := SplitFlags(args, "")
	rc := 0
	for _, d := range ops {
		fi, err := sc.sh.FS.Stat(sc.Abs(d))
		if err == nil && !fi.IsDir() {
			err = syscall.ENOTDIR
		}
		if err == nil {
			err = sc.sh.FS.Remove(sc.Abs(d))
		}
		if err != nil {
			sc.Errf("rmdir: '%s': %s\n", d, ErrText(err))
			rc = 1
		}
	}
	return rc
}

// eachInput calls f for every operand file, or stdin when there is none.
func eachInput(sc *Proc, name string, ops []string, f func(label string, r io.Reader)) int {
	if len(ops) == 0 {
		ops = []string{"-"}
	}
	rc := 0
	for _, op := range ops {
		if op == "-" {
			f("-", sc.Stdin)
			continue
		}
		data, err := sc.sh.FS.ReadFile(sc.Abs(op))
		if err != nil {
			sc.Errf("%s: %s: %s\n", name, op, ErrText(err))
			rc = 1
			continue
		}
		f(op, bytes.NewReader(data))
	}
	return rc
}

func cmdCat(sc *Proc, args []string) int {
	_, ops, _ := SplitFlags(args, "")
	return eachInput(sc, "cat", ops, func(_ string, r io.Reader) { _, _ = io.Copy(sc.Stdout, r) })
}

func modeString(m fs.FileMode) string {
	t := byte('-')
	switch {
	case m.IsDir():
		t = 'd'
	case m&fs.ModeSymlink != 0:
		t = 'l'
	case m&fs.ModeCharDevice != 0:
		t = 'c'
	}
	const rwx = "rwxrwxrwx"
	b := []byte{t}
	for i := 0; i < 9; i++ {
		if m&(1<<uint(8-i)) != 0 {
			b = append(b, rwx[i])
		} else {
			b = append(b, '-')
		}
	}
	return string(b)
}

func ownerOf(name string) (string, string) {
	c := vfs.Canonical(name)
	if c == vfs.ExternalStorage || strings.HasPrefix(c, vfs.ExternalStorage+"/") {
		return "u0_a0", "media_rw"
	}
	if strings.HasPrefix(c, vfs.LocalTmp) {
		return "shell", "shell"
	}
	return "root", "root"
}

func cmdLs(sc *Proc, args []string) int {
	flags, ops, _ := SplitFlags(args, "")
	long, all, dirOnly := has(flags, 'l'), has(flags, 'a'), has(flags, 'd')
	if len(ops) == 0 {
		ops = []string{sc.Dir}
	}
	line := func(fi fs.FileInfo, name, full string) {
		if !long {
			sc.Outf("%s\n", name)
			return
		}
		u, g := ownerOf(full)
		sc.Outf("%s 1 %s %s %d %s %s\n", modeString(fi.Mode()), u, g, fi.Size(), fi.ModTime().Format("2006-01-02 15:04"), name)
	}
	rc := 0
	for i, op := range ops {
		full := sc.Abs(op)
		fi, err := sc.sh.FS.Stat(full)
		if err != nil {
			sc.Errf("ls: %s: %s\n", op, ErrText(err))
			rc = 1
			continue
		}
		if !fi.IsDir() || dirOnly {
			line(fi, op, full)
			continue
		}
		if len(ops) > 1 {
			if i > 0 {
				sc.Outf("\n")
			}
			sc.Outf("%s:\n", op)
		}
		kids, _ := sc.sh.FS.ReadDir(full)
		if long {
			sc.Outf("total %d\n", len(kids)*4)
		}
		for _, k := range kids {
			if !all && strings.HasPrefix(k.Name(), ".") {
				continue
			}
			line(k, k.Name(), path.Join(full, k.Name()))
		}
	}
	return rc
}

func cmdTouch(sc *Proc, args []string) int {
	flags, ops, _ := SplitFlags(args, "dtr")
	rc := 0
	now := sc.sh.Clock.Now()
	for _, f := range ops {
		full := sc.Abs(f)
		if _, err := sc.sh.FS.Stat(full); err != nil {
			if has(flags, 'c') {
				continue
			}
			if err := sc.sh.FS.WriteFile(full, 0o660, now, bytes.NewReader(nil)); err != nil {
				sc.Errf("touch: '%s': %s\n", f, ErrText(err))
				rc = 1
			}
			continue
		}
		if err := sc.sh.FS.Chtimes(full, now); err != nil {
			sc.Errf("touch: '%s': %s\n", f, ErrText(err))
			rc = 1
		}
	}
	return rc
}

// copyTree copies src to dst (recursively for directories).
func (sc *Proc) copyTree(src, dst string, rec bool) error {
	fi, err := sc.sh.FS.Stat(src)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		data, err := sc.sh.FS.ReadFile(src)
		if err != nil {
			return err
		}
		return sc.sh.FS.WriteFile(dst, fi.Mode().Perm(), time.Time{}, bytes.NewReader(data))
	}
	if !rec {
		return fmt.Errorf("%s: %w", src, syscall.EISDIR)
	}
	if err := sc.sh.FS.MkdirAll(dst, fi.Mode().Perm()); err != nil {
		return err
	}
	kids, err := sc.sh.FS.ReadDir(src)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := sc.copyTree(path.Join(src, k.Name()), path.Join(dst, k.Name()), rec); err != nil {
			return err
		}
	}
	return nil
}

// targets maps the operands of cp/mv to (source, destination) pairs.
func (sc *Proc) targets(name string, ops []string) ([][2]string, bool) {
	if len(ops) < 2 {
		sc.Errf("%s: Needs 2 arguments\n", name)
		return nil, false
	}
	dst := sc.Abs(ops[len(ops)-1])
	fi, err := sc.sh.FS.Stat(dst)
	isDir := err == nil && fi.IsDir()
	if len(ops) > 2 && !isDir {
		sc.Errf("%s: '%s' not directory\n", name, ops[len(ops)-1])
		return nil, false
	}
	var out [][2]string
	for _, s := range ops[:len(ops)-1] {
		d := dst
		if isDir {
			d = path.Join(dst, path.Base(s))
		}
		out = append(out, [2]string{sc.Abs(s), d})
	}
	return out, true
}

func cmdCp(sc *Proc, args []string) int {
	flags, ops, _ := SplitFlags(args, "")
	pairs, ok := sc.targets("cp", ops)
	if !ok {
		return 1
	}
	rc := 0
	for _, pr := range pairs {
		if err := sc.copyTree(pr[0], pr[1], has(flags, 'r') || has(flags, 'R') || has(flags, 'a')); err != nil {
			sc.Errf("cp: %s\n", strings.TrimPrefix(ErrText(err), "open "))
			rc = 1
		}
	}
	return rc
}

func cmdMv(sc *Proc, args []string) int {
	_, ops, _ := SplitFlags(args, "")
	pairs, ok := sc.targets("mv", ops)
	if !ok {
		return 1
	}
	rc := 0
	for _, pr := range pairs {
		if err := sc.sh.FS.Rename(pr[0], pr[1]); err != nil {
			sc.Errf("mv: %s: %s\n", pr[0], ErrText(err))
			rc = 1
		}
	}
	return rc
}

func cmdStat(sc *Proc, args []string) int {
	flags, ops, _ := SplitFlags(args, "c")
	if len(ops) == 0 {
		sc.Errf("stat: Needs 1 argument\n")
		return 1
	}
	format, custom := flags['c']
	rc := 0
	for _, f := range ops {
		full := sc.Abs(f)
		fi, err := sc.sh.FS.Stat(full)
		if err != nil {
			sc.Errf("stat: '%s': %s\n", f, ErrText(err))
			rc = 1
			continue
		}
		if !custom {
			u, g := ownerOf(full)
			sc.Outf("  File: %s\n  Size: %d\t Blocks: %d\t IO Blocks: 4096\t%s\nAccess: (%04o/%s)\tUid: (%s)\tGid: (%s)\nModify: %s\n",
				f, fi.Size(), (fi.Size()+511)/512, fileType(fi), fi.Mode().Perm(), modeString(fi.Mode()), u, g,
				fi.ModTime().Format("2006-01-02 15:04:05.000000000 -0700"))
			continue
		}
		sc.Outf("%s\n", statFormat(format, f, full, fi))
	}
	return rc
}

func fileType(fi fs.FileInfo) string {
	switch {
	case fi.IsDir():
		return "directory"
	case fi.Mode()&fs.ModeCharDevice != 0:
		return "character special file"
	case fi.Size() == 0:
		return "regular empty file"
	}
	return "regular file"
}

func statFormat(format, name, full string, fi fs.FileInfo) string {
	var b strings.Builder
	u, g := ownerOf(full)
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch format[i] {
		case 's':
			b.WriteString(strconv.FormatInt(fi.Size(), 10))
		case 'n':
			b.WriteString(name)
		case 'Y':
			b.WriteString(strconv.FormatInt(fi.ModTime().Unix(), 10))
		case 'y':
			b.WriteString(fi.ModTime().Format("2006-01-02 15:04:05.000000000 -0700"))
		case 'F':
			b.WriteString(fileType(fi))
		case 'a':
			b.WriteString(strconv.FormatUint(uint64(fi.Mode().Perm()), 8))
		case 'A':
			b.WriteString(modeString(fi.Mode()))
		case 'U':
			b.WriteString(u)
		case 'G':
			b.WriteString(g)
		case 'b':
			b.WriteString(strconv.FormatInt((fi.Size()+511)/512, 10))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

func cmdChmod(sc *Proc, args []string) int {
	_, ops, _ := SplitFlags(args, "")
	if len(ops) < 2 {
		sc.Errf("chmod: Needs 2 arguments\n")
		return 1
	}
	v, err := strconv.ParseUint(ops[0], 8, 32)
	if err != nil {
		sc.Errf("chmod: bad mode '%s'\n", ops[0])
		return 1
	}
	rc := 0
	for _, f := range ops[1:] {
		if err := sc.sh.FS.Chmod(sc.Abs(f), fs.FileMode(v)); err != nil {
			sc.Errf("chmod: '%s': %s\n", f, ErrText(err))
			rc = 1
		}
	}
	return rc
}
