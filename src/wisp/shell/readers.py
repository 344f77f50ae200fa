"""Programs that only read, each with its whole option table (GNU coreutils, grep, diff,
file, …), so every word of a command line has a known meaning: a flag, a path it reads
or writes, code it runs, or plain data. An option missing from a table makes the command
not read-only: the table is the allowlist.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from wisp.shell.call import Call, Handler
from wisp.shell.model import PathUse
from wisp.shell.options import Opts, Parsed, parse, spec


def _fs(*names: str) -> frozenset[str]:
    return frozenset(names)


_HELP = " --help --version"
_NONE = frozenset[str]()


@dataclass(frozen=True, slots=True)
class Reader:
    """A command that reads its operands."""

    opts: Opts
    recursive: frozenset[str] = _NONE
    always_recursive: bool = False
    # With no operand it reads the working directory (ls, du); `cwd_if_recursive`: only
    # when recursive (grep -r).
    cwd_default: bool = False
    cwd_if_recursive: bool = False
    # The first operand is a pattern or program, unless one of `pattern_opts` gave it.
    pattern_first: bool = False
    pattern_opts: frozenset[str] = _NONE
    reads: frozenset[str] = _NONE
    writes: frozenset[str] = _NONE
    # Options that run a program of the caller's choosing.
    unsafe: frozenset[str] = _NONE
    # Options naming a file that lists more files to read (`-` is standard input): those
    # files cannot be known.
    lists: frozenset[str] = _NONE
    # Operands are data, not files (tr, seq).
    data_operands: bool = False
    is_recursive: Callable[[Parsed], bool] | None = None
    # Anything else the command's words can mean.
    check: Callable[[Call, Parsed], None] | None = None

    def __call__(self, call: Call) -> None:
        parsed = parse(call.args, self.opts)
        call.unknown_words(parsed.unknown)
        recursive = self.always_recursive or parsed.has(self.recursive) or bool(
            self.is_recursive and self.is_recursive(parsed))
        for word in parsed.values(self.reads):
            call.read(word)
        for word in parsed.values(self.writes):
            call.write(word)
        for word in parsed.values(self.lists):
            if word.static != "-":
                call.read(word)
            call.uses.append(PathUse("read", None))
        if parsed.has(self.unsafe):
            call.read_only = False
            call.hidden_code = True
        if self.check is not None:
            self.check(call, parsed)
        if not self.data_operands:
            self._read_operands(call, parsed, recursive)

    def _read_operands(self, call: Call, parsed: Parsed, recursive: bool) -> None:
        """The operands are files read (past a leading pattern); none may mean the cwd."""
        operands = parsed.operands
        if self.pattern_first and not parsed.has(self.pattern_opts):
            operands = operands[1:]
        for word in operands:
            call.read(word, recursive)
        if not operands and (self.cwd_default or (recursive and self.cwd_if_recursive)):
            call.here("read", recursive)


def _grep_recursive(parsed: Parsed) -> bool:
    return any(value.static == "recurse" for value in parsed.values({"-d", "--directories"}))


_GREP = Reader(
    spec("-E -F -G -P -e: -f: -i -y -w -x -z -s -v -V -m: -b -n -H -h -o -q -a -I -d: -D: "
         "-r -R -L -l -c -T -Z -U -u -A: -B: -C: --extended-regexp --fixed-strings "
         "--basic-regexp --perl-regexp --regexp= --file= --ignore-case --no-ignore-case "
         "--word-regexp --line-regexp --null-data --no-messages --invert-match "
         "--max-count= --byte-offset --line-number --no-line-number --line-buffered "
         "--with-filename --no-filename --label= --only-matching --quiet --silent "
         "--binary-files= --text --directories= --devices= --recursive "
         "--dereference-recursive --include= --exclude= --exclude-from= --exclude-dir= "
         "--files-without-match --files-with-matches --count --initial-tab --null "
         "--before-context= --after-context= --context= --group-separator= "
         "--no-group-separator --color=? --colour=? --binary" + _HELP, numeric=True),
    recursive=_fs("-r", "-R", "--recursive", "--dereference-recursive"),
    cwd_if_recursive=True, pattern_first=True,
    pattern_opts=_fs("-e", "-f", "--regexp", "--file"),
    reads=_fs("-f", "--file", "--exclude-from"), is_recursive=_grep_recursive)

def _sort_temporary(call: Call, parsed: Parsed) -> None:
    for word in parsed.values({"-T", "--temporary-directory"}):
        call.write(word, True)  # its temporary files


_SORT = Reader(
    spec("-b -d -f -g -i -M -h -n -R -r -V -c -C -k: -m -o: -s -S: -t: -T: -u -z "
         "--ignore-leading-blanks --dictionary-order --ignore-case --general-numeric-sort "
         "--ignore-nonprinting --month-sort --human-numeric-sort --numeric-sort "
         "--random-sort --random-source= --reverse --sort= --version-sort --batch-size= "
         "--check=? --compress-program= --debug --files0-from= --key= --merge --output= "
         "--stable --buffer-size= --field-separator= --temporary-directory= --parallel= "
         "--unique --zero-terminated" + _HELP),
    writes=_fs("-o", "--output"), reads=_fs("--random-source"), lists=_fs("--files0-from"),
    unsafe=_fs("--compress-program"), check=_sort_temporary)

_DIFF = Reader(
    spec("-q -s -c -C: -u -U: -e -n -y -W: -p -F: -t -T -l -r -N -x: -X: -S: -i -E -Z -b "
         "-w -B -I: -a -D: -d -v --normal --brief --report-identical-files --context=? "
         "--unified=? --ed --rcs --side-by-side --width= --left-column "
         "--suppress-common-lines --show-c-function --show-function-line= --label= "
         "--expand-tabs --initial-tab --tabsize= --suppress-blank-empty --paginate "
         "--recursive --no-dereference --new-file --unidirectional-new-file "
         "--ignore-file-name-case --no-ignore-file-name-case --exclude= --exclude-from= "
         "--starting-file= --from-file= --to-file= --ignore-case --ignore-tab-expansion "
         "--ignore-trailing-space --ignore-space-change --ignore-all-space "
         "--ignore-blank-lines --ignore-matching-lines= --text --strip-trailing-cr "
         "--ifdef= --line-format= --old-line-format= --new-line-format= "
         "--unchanged-line-format= --old-group-format= --new-group-format= "
         "--unchanged-group-format= --changed-group-format= --minimal --horizon-lines= "
         "--speed-large-files --color=? --palette=" + _HELP, numeric=True),
    recursive=_fs("-r", "--recursive"),
    reads=_fs("-X", "--exclude-from", "--from-file", "--to-file"))

_LS = Reader(
    spec("-a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -I: -k -l -L -m -n -N -o -p -q -Q "
         "-r -R -s -S -t -T: -u -U -v -w: -x -X -Z -1 --all --almost-all --author --escape "
         "--block-size= --ignore-backups --color=? --directory --dired --classify=? "
         "--file-type --format= --full-time --group-directories-first --no-group "
         "--human-readable --si --dereference-command-line "
         "--dereference-command-line-symlink-to-dir --hide= --hyperlink=? "
         "--indicator-style= --inode --ignore= --kibibytes --dereference "
         "--numeric-uid-gid --literal --hide-control-chars --show-control-chars "
         "--quote-name --quoting-style= --reverse --recursive --size --sort= --time= "
         "--time-style= --tabsize= --width= --context --zero" + _HELP),
    recursive=_fs("-R", "--recursive"), cwd_default=True)

_DU = Reader(
    spec("-0 -a -B: -b -c -D -d: -H -h -k -L -l -m -P -S -s -t: -X: -x --null --all "
         "--apparent-size --block-size= --bytes --total --dereference-args --max-depth= "
         "--summarize --files0-from= --human-readable --inodes --dereference "
         "--count-links --no-dereference --separate-dirs --si --threshold= --time=? "
         "--time-style= --exclude-from= --exclude= --one-file-system" + _HELP),
    always_recursive=True, cwd_default=True, reads=_fs("-X", "--exclude-from"),
    lists=_fs("--files0-from"))

_WC = Reader(spec("-c -m -l -L -w --bytes --chars --lines --files0-from= "
                  "--max-line-length --words --total=" + _HELP), lists=_fs("--files0-from"))

_SUMS = spec("-b -c -t -z -w --binary --check --tag --text --zero --ignore-missing --quiet "
             "--status --strict --warn" + _HELP)


def _sum_check(call: Call, parsed: Parsed) -> None:
    if parsed.has({"-c", "--check"}):
        call.uses.append(PathUse("read", None))  # the files the list names


def _file_check(call: Call, parsed: Parsed) -> None:
    if parsed.has({"-C", "--compile"}):
        call.read_only = False
        call.here("write", False)  # writes NAME.mgc into the working directory


_FILE = Reader(
    spec("-v -m: -z -Z -b -c -e: -f: -F: -i -k -l -L -h -n -N -0 -p -P: -r -s -S -C -d -E "
         "--magic-file= --uncompress --uncompress-noreport --brief --checking-printout "
         "--exclude= --exclude-quiet= --files-from= --separator= --mime --mime-encoding "
         "--apple --extension --mime-type --keep-going --list --dereference "
         "--no-dereference --no-buffer --no-pad --print0 --preserve-date --parameter= "
         "--raw --special-files --no-sandbox --compile --debug" + _HELP),
    reads=_fs("-m", "--magic-file"), lists=_fs("-f", "--files-from"), check=_file_check)


def _date_check(call: Call, parsed: Parsed) -> None:
    # `date MMDDhhmm` sets the clock like -s does; only `+FORMAT` operands are harmless.
    if parsed.has({"-s", "--set"}) or any(
            not w.display.startswith("+") for w in parsed.operands):
        call.read_only = False


_DATE = Reader(
    spec("-d: -f: -I:: -R -r: -s: -u --date= --debug --file= --iso-8601=? --resolution "
         "--rfc-email --rfc-3339= --reference= --set= --utc --universal" + _HELP),
    reads=_fs("-f", "--file", "-r", "--reference"), data_operands=True, check=_date_check)


def _hostname_check(call: Call, parsed: Parsed) -> None:
    if parsed.operands or parsed.has({"-F", "--file", "-b", "--boot"}):
        call.read_only = False


_HOSTNAME = Reader(
    spec("-a -A -b -d -f -F: -i -I -s -y -v --alias --all-fqdns --boot --domain --fqdn "
         "--long --file= --ip-address --all-ip-addresses --short --yp --nis --verbose"
         + _HELP),
    data_operands=True, check=_hostname_check)


def _less_check(call: Call, parsed: Parsed) -> None:
    # `+cmd` runs less commands at start-up.
    if any(w.display.startswith("+") for w in parsed.operands):
        call.read_only = False


_LESS = Reader(
    spec("-N -S -R -r -F -X -i -I -M -m -n -s -e -E -f -g -G -K -q -Q -w -W -J -a -c -C -d "
         "-u -U -V -L -p: -P: -x: -y: -z: -b: -h: -j: -k: -t: -T: -o: -O: "
         "--chop-long-lines --RAW-CONTROL-CHARS --raw-control-chars --quit-if-one-screen "
         "--no-init --ignore-case --IGNORE-CASE --LINE-NUMBERS --line-numbers "
         "--squeeze-blank-lines --log-file= --LOG-FILE= --lesskey-file= --pattern= "
         "--prompt= --tabs= --quit-at-eof --QUIT-AT-EOF --silent --quiet" + _HELP),
    reads=_fs("-k", "--lesskey-file"), writes=_fs("-o", "-O", "--log-file", "--LOG-FILE"),
    check=_less_check)


_RG = Reader(
    spec("-A: -B: -C: -c -d: -E: -e: -f: -F -g: -H -h -i -I -j: -l -L -m: -M: -n -N -o -p "
         "-P -q -r: -s -S -t: -T: -u -U -v -V -w -x -z -0 -a -b "
         "--after-context= --before-context= --context= --count --count-matches "
         "--max-depth= --encoding= --regexp= --file= --fixed-strings --glob= --iglob= "
         "--with-filename --no-filename --heading --no-heading --hidden --no-hidden "
         "--ignore-case --smart-case --case-sensitive --no-ignore --no-ignore-vcs "
         "--no-ignore-dot --no-ignore-parent --no-ignore-global --no-ignore-exclude "
         "--threads= --files-with-matches --files-without-match --follow --max-columns= "
         "--max-count= --line-number --no-line-number --only-matching --pretty --quiet "
         "--replace= --sort= --sortr= --type= --type-not= --type-list --text "
         "--unrestricted --invert-match --word-regexp --line-regexp --search-zip "
         "--null --null-data --byte-offset --column --no-column --color= --colors= "
         "--files --json --no-messages --multiline --multiline-dotall --pcre2 "
         "--trim --vimgrep --stats --passthru --max-filesize= --engine= "
         "--context-separator= --field-context-separator= --field-match-separator= "
         "--path-separator= --ignore-file= --pre= --pre-glob= --hostname-bin= "
         "--hyperlink-format= --type-add= --type-clear= --dfa-size-limit= "
         "--regex-size-limit= --one-file-system --binary --crlf --debug --trace "
         "--no-config --line-buffered --block-buffered --include-zero --max-columns-preview"
         + _HELP),
    always_recursive=True, cwd_default=True, pattern_first=True,
    pattern_opts=_fs("-e", "-f", "--regexp", "--file", "--files", "--type-list"),
    reads=_fs("-f", "--file", "--ignore-file"),
    # --pre and --hostname-bin run a program of the caller's choosing.
    unsafe=_fs("--pre", "--hostname-bin"))


def _plain(text: str, **kwargs: bool) -> Reader:
    return Reader(spec(text + _HELP, **kwargs))


def readers() -> dict[str, Handler]:
    sums = Reader(_SUMS, check=_sum_check)
    table: dict[str, Handler] = dict.fromkeys(
        ("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum"),
        sums)
    table.update({
        "cat": _plain("-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank "
                      "--show-ends --number --squeeze-blank --show-tabs --show-nonprinting"),
        "tac": _plain("-b -r -s: --before --regex --separator="),
        "rev": _plain("-h -V -0 --zero"),
        "comm": _plain("-1 -2 -3 -z --check-order --nocheck-order --output-delimiter= "
                       "--total --zero-terminated"),
        "readlink": _plain("-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing "
                           "--canonicalize-missing --no-newline --quiet --silent --verbose "
                           "--zero"),
        "realpath": _plain("-e -m -L -P -q -s -z --canonicalize-existing "
                           "--canonicalize-missing --logical --physical --quiet "
                           "--relative-to= --relative-base= --strip --no-symlinks --zero"),
        "cksum": Reader(spec("-a: -c -l: -z -w --algorithm= --check --length= --tag "
                             "--untagged --zero --ignore-missing --quiet --status --strict "
                             "--warn --debug --base64 --raw" + _HELP), check=_sum_check),
        "sum": _plain("-r -s --sysv"),
        "expand": _plain("-i -t: --initial --tabs=", numeric=True),
        "unexpand": _plain("-a -t: --all --first-only --tabs=", numeric=True),
        "fold": _plain("-b -s -w: --bytes --spaces --width=", numeric=True),
        "fmt": _plain("-c -p: -s -t -u -w: -g: --crown-margin --prefix= --split-only "
                      "--tagged-paragraph --uniform-spacing --width= --goal=", numeric=True),
        "zcat": _plain("-f -q -v -l -t -h -V --force --quiet --verbose --list --test"),
        "head": _plain("-c: -n: -q -v -z --bytes= --lines= --quiet --silent --verbose "
                       "--zero-terminated", numeric=True),
        "tail": _plain("-c: -f -F -n: -q -s: -v -z --bytes= --follow=? --lines= "
                       "--max-unchanged-stats= --pid= --quiet --silent --retry "
                       "--sleep-interval= --verbose --zero-terminated", numeric=True),
        "less": _LESS,
        "more": _plain("-d -l -f -p -c -s -u -n: --silent --logical --no-pause "
                       "--print-over --clean-print --squeeze --plain --lines=", numeric=True),
        "grep": _GREP, "egrep": _GREP, "fgrep": _GREP,
        "cut": _plain("-b: -c: -d: -f: -n -s -z --bytes= --characters= --delimiter= "
                      "--fields= --complement --only-delimited --output-delimiter= "
                      "--zero-terminated"),
        "sort": _SORT, "wc": _WC, "diff": _DIFF, "ls": _LS, "du": _DU,
        "cmp": _plain("-b -i: -l -n: -s -v --print-bytes --ignore-initial= --verbose "
                      "--bytes= --quiet --silent"),
        "file": _FILE,
        "stat": _plain("-L -f -c: -t --dereference --file-system --cached= --format= "
                       "--printf= --terse"),
        "df": _plain("-a -B: -h -H -i -k -l -P -t: -T -x: -v --all --block-size= "
                     "--human-readable --si --inodes --local --no-sync --output=? "
                     "--portability --sync --total --type= --print-type --exclude-type="),
        "nl": _plain("-b: -d: -f: -h: -i: -l: -n: -p -s: -v: -w: --body-numbering= "
                     "--section-delimiter= --footer-numbering= --header-numbering= "
                     "--line-increment= --join-blank-lines= --number-format= "
                     "--no-renumber --number-separator= --starting-line-number= "
                     "--number-width="),
        "paste": _plain("-d: -s -z --delimiters= --serial --zero-terminated"),
        "join": _plain("-a: -e: -i -j: -o: -t: -v: -1: -2: -z --ignore-case --check-order "
                       "--nocheck-order --header --zero-terminated"),
        "od": _plain("-A: -j: -N: -S: -t: -v -w:: -a -b -c -d -f -i -l -o -s -x "
                     "--address-radix= --endian= --skip-bytes= --read-bytes= --strings=? "
                     "--format= --output-duplicates --width=? --traditional"),
        "strings": _plain("-a -d -f -n: -t: -w -o -T: -e: -U: -s: -h -v -V --all --data "
                          "--print-file-name --bytes= --radix= --include-all-whitespace "
                          "--target= --encoding= --unicode= --output-separator=",
                          numeric=True),
        "base64": _plain("-d -i -w: --decode --ignore-garbage --wrap="),
        "base32": _plain("-d -i -w: --decode --ignore-garbage --wrap="),
        "date": _DATE, "hostname": _HOSTNAME,
        "hexdump": Reader(spec("-b -c -C -d -o -x -e: -f: -L -n: -s: -v -h -V"),
                          reads=_fs("-f")),
        "tree": Reader(spec("-a -d -l -f -x -L: -R -P: -I: -u -g -s -h -D -F -q -N -Q -p "
                            "-i -r -t -c -v -U -C -n -o: -H: -T: -J -X --noreport "
                            "--dirsfirst --filelimit= --timefmt= --sort= --charset= "
                            "--gitignore --prune --matchdirs --ignore-case --du --si"
                            + _HELP),
                       always_recursive=True, cwd_default=True, writes=_fs("-o")),
        "rg": _RG,
        "tr": Reader(spec("-c -C -d -s -t --complement --delete --squeeze-repeats "
                          "--truncate-set1" + _HELP), data_operands=True),
        "seq": Reader(spec("-f: -s: -w --format= --separator= --equal-width" + _HELP,
                           numeric=True), data_operands=True),
    })
    return table
