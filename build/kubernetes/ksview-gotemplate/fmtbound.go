// Upper bounds of what Go's fmt writes, computed without writing it. fmt builds its whole output
// in memory before it hands any to a writer (a writer that refuses cannot stop it), and a width or
// precision may ask for millions of bytes from a few characters ("%0999999d"), so a builtin that
// formats can be held to a budget only by knowing beforehand how much it may build.
//
// printfBound reads a format as fmt does (fmt/print.go, doPrintf): which argument each directive
// takes, explicit indexes "[n]" and "*" widths included, and widths and precisions as fmt parses
// them (up to 9,999,999 when written, 1,000,000 from an argument). A width or precision applies to
// every element of a map, slice or struct. The bounds are loose by small factors (a string may
// take up to 5 bytes per byte under "% #x"), never under what fmt writes: fmtbound_test.go checks
// them against fmt itself. A value that formats itself (a Formatter, Stringer, error or
// GoStringer) cannot be bounded and counts as unbounded; the templates' values (strings, the
// properties map, numbers, booleans, nil) have no such methods.
package main

import (
	"fmt"
	"reflect"
	"unicode/utf8"
)

// unbounded is more than any budget; sums saturate at it.
const unbounded = 1 << 50

// directiveOverhead covers what fmt writes for a directive besides its argument's text: its error
// notes ("%!(BADWIDTH)%!(BADPREC)%!d(BADINDEX)" at most), and "%!(EXTRA " and ", " for an extra argument.
const directiveOverhead = 64

// leafOverhead covers what fmt writes around one value besides its text and its type's name: a bad
// verb's "%!d(" "=" ")", quotes, separators, prefixes such as "0x" or "U+", a sign.
const leafOverhead = 64

func add(a, b int) int {
	if a+b > unbounded {
		return unbounded
	}
	return a + b
}

// printfBound bounds len(fmt.Sprintf(format, args...)).
func printfBound(format string, args []any) int {
	end := len(format)
	total := end
	argNum := 0         // the argument the next directive takes
	afterIndex := false // the previous item of the format was an index "[n]"
	reordered := false  // an index was seen: fmt then does not report extra arguments
	for i := 0; i < end; {
		goodArgNum := true
		for i < end && format[i] != '%' {
			i++
		}
		if i >= end {
			break
		}
		i++
		total = add(total, directiveOverhead)
		sharp := false
	flags:
		for ; i < end; i++ {
			switch format[i] {
			case '#':
				sharp = true
			case '0', '+', '-', ' ':
			default:
				break flags
			}
		}
		// fmt's argNumber: an index "[n]" at i, if any, chooses the argument.
		argNumber := func() {
			if i >= end || format[i] != '[' {
				afterIndex = false
				return
			}
			reordered = true
			index, width, ok := parseArgNumber(format[i:])
			i += width
			if ok && 0 <= index && index < len(args) {
				argNum, afterIndex = index, true
				return
			}
			goodArgNum, afterIndex = false, ok
		}
		argNumber()
		wid, prec := 0, 0
		if i < end && format[i] == '*' {
			i++
			wid, argNum = intFromArg(args, argNum)
			if wid < 0 {
				wid = -wid
			}
			afterIndex = false
		} else {
			var present bool
			wid, present, i = parsenum(format, i, end)
			if afterIndex && present {
				goodArgNum = false
			}
		}
		if i+1 < end && format[i] == '.' {
			i++
			if afterIndex {
				goodArgNum = false
			}
			argNumber()
			if i < end && format[i] == '*' {
				i++
				prec, argNum = intFromArg(args, argNum)
				if prec < 0 {
					prec = 0
				}
				afterIndex = false
			} else {
				prec, _, i = parsenum(format, i, end)
			}
		}
		if !afterIndex {
			argNumber()
		}
		if i >= end {
			break
		}
		verb, size := utf8.DecodeRuneInString(format[i:])
		i += size
		if verb != '%' && goodArgNum && argNum < len(args) {
			total = add(total, valueBound(args[argNum], verb, sharp, wid+prec))
			argNum++
		}
	}
	if !reordered && argNum < len(args) {
		for _, a := range args[argNum:] {
			total = add(total, directiveOverhead+valueBound(a, 'v', false, 0))
		}
	}
	return total
}

// printBound bounds len(fmt.Sprint(args...)) and len(fmt.Sprintln(args...)).
func printBound(args []any) int {
	total := 1
	for _, a := range args {
		total = add(total, 1+valueBound(a, 'v', false, 0))
	}
	return total
}

// tooLarge, parsenum, parseArgNumber and intFromArg read numbers as fmt does.
func tooLarge(x int) bool { return x > 1e6 || x < -1e6 }

func parsenum(s string, start, end int) (num int, isnum bool, newi int) {
	if start >= end {
		return 0, false, end
	}
	for newi = start; newi < end && '0' <= s[newi] && s[newi] <= '9'; newi++ {
		if tooLarge(num) {
			return 0, false, end
		}
		num = num*10 + int(s[newi]-'0')
		isnum = true
	}
	return
}

func parseArgNumber(format string) (index int, width int, ok bool) {
	if len(format) < 3 {
		return 0, 1, false
	}
	for i := 1; i < len(format); i++ {
		if format[i] == ']' {
			n, ok, newi := parsenum(format, 1, i)
			if !ok || newi != i {
				return 0, i + 1, false
			}
			return n - 1, i + 1, true
		}
	}
	return 0, 1, false
}

// intFromArg is a "*" width or precision: the argument's value when it is an integer within fmt's
// bounds, else 0; and the next argument's number.
func intFromArg(a []any, argNum int) (num int, newArgNum int) {
	if argNum >= len(a) {
		return 0, argNum
	}
	switch v := reflect.ValueOf(a[argNum]); v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n := v.Int(); int64(int(n)) == n {
			num = int(n)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n := v.Uint(); int64(n) >= 0 && uint64(int(n)) == n {
			num = int(n)
		}
	}
	if tooLarge(num) {
		num = 0
	}
	return num, argNum + 1
}

var (
	formatterType  = reflect.TypeFor[fmt.Formatter]()
	stringerType   = reflect.TypeFor[fmt.Stringer]()
	goStringerType = reflect.TypeFor[fmt.GoStringer]()
	errorType      = reflect.TypeFor[error]()
)

// maxDepth bounds the walk of nested values (deeper counts as unbounded).
const maxDepth = 64

// valueBound bounds what fmt writes for one argument under verb; pad (the width plus the
// precision) may be written once per element.
func valueBound(arg any, verb rune, sharp bool, pad int) int {
	if arg == nil {
		return add(pad, leafOverhead)
	}
	// "%#v" and every verb but %s and %v may quote or hex-encode a string.
	raw := verb == 's' || (verb == 'v' && !sharp)
	return reflectBound(reflect.ValueOf(arg), raw, pad, 0)
}

func reflectBound(v reflect.Value, raw bool, pad, depth int) int {
	if depth > maxDepth {
		return unbounded
	}
	if !v.IsValid() {
		return add(pad, leafOverhead)
	}
	t := v.Type()
	if t.Implements(formatterType) || t.Implements(stringerType) || t.Implements(goStringerType) || t.Implements(errorType) {
		return unbounded
	}
	// Every value's own text, type name (in "%!d(string=…)", "%T", "%#v") and padding.
	own := add(pad, leafOverhead+len(t.String()))
	switch v.Kind() {
	case reflect.String:
		if raw {
			return add(own, v.Len())
		}
		return add(own, 5*v.Len()) // "% #x": "0x41 " per byte; %q: at most "\x80" per byte
	case reflect.Bool:
		return add(own, len("false"))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return add(own, 80) // 64 binary digits, "-0b"; %U "U+10FFFF '…'"; %q '\U0010ffff'
	case reflect.Float32, reflect.Float64:
		return add(own, 330) // %f of 1.8e308: 309 digits
	case reflect.Complex64, reflect.Complex128:
		return add(own, add(pad, 2*330)) // each part padded
	case reflect.Map:
		total := own
		iter := v.MapRange()
		for iter.Next() {
			total = add(total, 2+add(reflectBound(iter.Key(), raw, pad, depth+1), reflectBound(iter.Value(), raw, pad, depth+1)))
			if total == unbounded {
				return total
			}
		}
		return total
	case reflect.Slice, reflect.Array:
		total := own
		for i := 0; i < v.Len(); i++ {
			total = add(total, 2+reflectBound(v.Index(i), raw, pad, depth+1))
			if total == unbounded {
				return total
			}
		}
		return total
	case reflect.Struct:
		total := own
		for i := 0; i < v.NumField(); i++ {
			total = add(total, 2+len(t.Field(i).Name)+reflectBound(v.Field(i), raw, pad, depth+1))
		}
		return total
	case reflect.Interface:
		return add(own, reflectBound(v.Elem(), raw, pad, depth+1))
	case reflect.Pointer:
		// At the top, fmt prints what a pointer to a composite points to ("&{…}"); else its address.
		if depth == 0 && !v.IsNil() {
			return add(own, add(20, reflectBound(v.Elem(), raw, pad, depth+1)))
		}
		return add(own, 20)
	default: // chan, func, unsafe pointer: an address
		return add(own, 20)
	}
}
