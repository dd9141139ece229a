package lua

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// unsafeBase are the base library's functions a sandboxed script does not
// get: they read files or reach the Go runtime.
var unsafeBase = []string{"dofile", "loadfile", "collectgarbage", "newproxy", "_printregs", "module"}

// openSandbox opens the libraries a script may use. With openLibs it opens
// all of gopher-lua's, as Argo CD does for useOpenLibs.
func openSandbox(L *lua.LState, openLibs bool, memoryLimit uint64) error {
	if openLibs {
		L.OpenLibs()
		capStringRep(L, memoryLimit)
		return nil
	}
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			return fmt.Errorf("%s: %w", lib.name, err)
		}
	}
	for _, name := range unsafeBase {
		L.SetGlobal(name, lua.LNil)
	}
	L.SetGlobal("print", L.NewFunction(func(*lua.LState) int { return 0 }))
	capStringRep(L, memoryLimit)

	// require finds only the preloaded modules: no package paths, no files.
	pkg := L.GetGlobal(lua.LoadLibName).(*lua.LTable)
	preloadOnly := L.CreateTable(1, 0)
	preloadOnly.Append(L.GetField(pkg, "loaders").(*lua.LTable).RawGetInt(1))
	L.SetField(pkg, "loaders", preloadOnly)
	L.SetField(L.Get(lua.RegistryIndex), "_LOADERS", preloadOnly)
	L.SetField(pkg, "path", lua.LString(""))
	L.SetField(pkg, "cpath", lua.LString(""))
	L.SetField(pkg, "loadlib", lua.LNil)

	// os is reachable as a global and through require, as in Argo CD.
	os := L.SetFuncs(L.NewTable(), safeOS)
	L.SetGlobal(lua.OsLibName, os)
	L.PreloadModule(lua.OsLibName, func(L *lua.LState) int { L.Push(os); return 1 })
	L.PreloadModule("json", func(L *lua.LState) int { L.Push(L.SetFuncs(L.NewTable(), jsonFuncs)); return 1 })
	return nil
}

// capStringRep replaces string.rep by one that refuses results over limit,
// which would otherwise be allocated in one go, out of the watchdog's reach.
func capStringRep(L *lua.LState, limit uint64) {
	str, ok := L.GetGlobal(lua.StringLibName).(*lua.LTable)
	if !ok {
		return
	}
	L.SetField(str, "rep", L.NewFunction(func(L *lua.LState) int {
		s := L.CheckString(1)
		n := L.CheckInt(2)
		sep := L.OptString(3, "")
		if n <= 0 {
			L.Push(lua.LString(""))
			return 1
		}
		if size := (uint64(len(s)) + uint64(len(sep))) * uint64(n); size > limit {
			L.RaiseError("string.rep: a result of %d bytes is over the memory limit", size)
		}
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(s)
		}
		L.Push(lua.LString(b.String()))
		return 1
	}))
}

// safeOS is the part of the os library a sandboxed script gets: reading
// the clock, as Argo CD's safe os.
var safeOS = map[string]lua.LGFunction{
	"time": osTime,
	"date": osDate,
}

func osTime(L *lua.LState) int {
	if L.GetTop() == 0 || L.Get(1) == lua.LNil {
		L.Push(lua.LNumber(time.Now().Unix()))
		return 1
	}
	t := L.CheckTable(1)
	field := func(name string, def int) int {
		if n, ok := t.RawGetString(name).(lua.LNumber); ok {
			return int(n)
		}
		return def
	}
	when := time.Date(field("year", 1970), time.Month(field("month", 1)), field("day", 1),
		field("hour", 12), field("min", 0), field("sec", 0), 0, time.Local)
	L.Push(lua.LNumber(when.Unix()))
	return 1
}

func osDate(L *lua.LState) int {
	format := L.OptString(1, "%c")
	t := time.Now()
	if L.GetTop() >= 2 {
		t = time.Unix(L.CheckInt64(2), 0)
	}
	if rest, ok := strings.CutPrefix(format, "!"); ok {
		format, t = rest, t.UTC()
	}
	if strings.HasPrefix(format, "*t") {
		tbl := L.NewTable()
		for k, v := range map[string]int{
			"year": t.Year(), "month": int(t.Month()), "day": t.Day(), "hour": t.Hour(),
			"min": t.Minute(), "sec": t.Second(), "wday": int(t.Weekday()) + 1, "yday": t.YearDay(),
		} {
			tbl.RawSetString(k, lua.LNumber(v))
		}
		tbl.RawSetString("isdst", lua.LFalse)
		L.Push(tbl)
		return 1
	}
	L.Push(lua.LString(strftime(t, format)))
	return 1
}

// strftimeLayouts maps C's strftime conversions to Go layouts.
var strftimeLayouts = map[byte]string{
	'a': "Mon", 'A': "Monday", 'b': "Jan", 'B': "January", 'c': "Mon Jan  2 15:04:05 2006",
	'd': "02", 'F': "2006-01-02", 'H': "15", 'I': "03", 'm': "01", 'M': "04", 'p': "PM",
	'S': "05", 'T': "15:04:05", 'x': "01/02/06", 'X': "15:04:05", 'y': "06", 'Y': "2006",
	'z': "-0700", 'Z': "MST",
}

func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch verb := format[i]; verb {
		case '%':
			b.WriteByte('%')
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		default:
			if layout, ok := strftimeLayouts[verb]; ok {
				b.WriteString(t.Format(layout))
				continue
			}
			b.WriteByte('%')
			b.WriteByte(verb)
		}
	}
	return b.String()
}

// jsonFuncs is the preloaded "json" module of newer Argo CD versions.
var jsonFuncs = map[string]lua.LGFunction{
	"encode": func(L *lua.LState) int {
		v, err := toGo(L.CheckAny(1), nil, 0)
		if err != nil {
			L.RaiseError("json.encode: %s", err)
		}
		out, err := json.Marshal(v)
		if err != nil {
			L.RaiseError("json.encode: %s", err)
		}
		L.Push(lua.LString(out))
		return 1
	},
	"decode": func(L *lua.LState) int {
		var v any
		if err := json.Unmarshal([]byte(L.CheckString(1)), &v); err != nil {
			L.Push(lua.LNil)
			L.Push(lua.LString(err.Error()))
			return 2
		}
		L.Push(toLua(L, v))
		return 1
	},
}
