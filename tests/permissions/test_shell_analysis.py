"""The Bash command analyser behind permission checks: commands found through every shell
form, the paths they touch, read-only judgement, and failing closed."""

from __future__ import annotations

import pytest

from wisp.shell import PathUse, ShellAnalysis, SimpleCommand, analyse

CWD = "/work/proj"
HOME = "/home/user"
ENV = {"HOME": HOME, "PATH": "/usr/bin:/bin", "USER": "user", "GREETING": "hello world"}


def run(command: str) -> ShellAnalysis:
    return analyse(command, cwd=CWD, env=ENV)


def names(analysis: ShellAnalysis) -> list[str]:
    return [c.name for c in analysis.commands]


def find(analysis: ShellAnalysis, name: str) -> SimpleCommand:
    found = [c for c in analysis.commands if c.name == name]
    assert found, f"no {name!r} command in {analysis}"
    return found[0]


RM_SPELLINGS = [
    "/bin/rm f",
    "env rm f",
    "env -i FOO=1 rm f",
    "env -u HOME -- rm f",
    "command rm f",
    "command -p rm f",
    "builtin exec rm f",
    "exec rm f",
    "exec -a name rm f",
    "nice rm f",
    "nice -n 5 rm f",
    "nice -5 rm f",
    "nohup rm f",
    "time rm f",
    "time -p rm f",
    "timeout 5 rm f",
    "timeout -s KILL -k 3 5 rm f",
    "stdbuf -o0 rm f",
    "stdbuf -oL -e L rm f",
    "setsid -w rm f",
    "echo f | xargs rm",
    "xargs -0 -n 1 -P 4 rm < list",
    "sudo -u root rm f",
    "sudo -- rm f",
    "doas rm f",
    "nice timeout 5 env -i sudo rm f",
    "r''m f",
    "\\rm f",
    '"rm" f',
    "'rm' f",
    "$'rm' f",
    "$'\\x72m' f",
    "rm\tf",
    "FOO=1 rm f",
    "2>/dev/null rm f",
    "(rm f)",
    "{ rm f; }",
    "! rm f",
    "if true; then rm f; fi",
    "if false; then :; elif true; then rm f; else :; fi",
    "if false; then :; else rm f; fi",
    "for i in 1; do rm f; done",
    "for ((i=0; i<1; i++)); do rm f; done",
    "while false; do :; done; until true; do rm f; done",
    "case x in x) rm f;; esac",
    "f() { rm f; }; f",
    "function g { rm f; }",
    "echo $(rm f)",
    "echo `rm f`",
    'echo "$(rm f)"',
    'echo "a $(echo "$(rm f)") b"',
    "cat <(rm f)",
    "tee >(rm f)",
    "echo hi > $(rm f)",
    "x=$(rm f)",
    "export X=$(rm f)",
    "local X=$(rm f)",
    "[[ $(rm f) ]]",
    "(( $(rm f) ))",
    "echo $(( 1 + $(rm f) ))",
    "echo ${X:-$(rm f)}",
    "cat <<EOF\n$(rm f)\nEOF",
    "bash -c 'rm f'",
    'sh -c "rm f"',
    "bash -lc 'rm f'",
    "bash -e -o pipefail -c 'rm f'",
    "zsh -c 'rm f'",
    "dash -c 'rm f'",
    "bash <<'EOF'\nrm f\nEOF",
    "bash <<< 'rm f'",
    "sudo bash -c 'rm f'",
    "eval 'rm f'",
    'eval "rm" f',
    "eval \"bash -c 'rm f'\"",
    "trap 'rm f' EXIT",
    "find . -name f -exec rm {} \\;",
    "find . -name f -execdir rm {} +",
    "find . -name f -ok rm {} ';'",
    "echo x #'\nrm v.txt",
    "echo $'\\'' ; rm v.txt #'",
    "true && rm f",
    "false || rm f",
    "true; rm f &",
    "true |& rm f",
    "a=1 b=2 rm f",
    "env -S 'rm f'",
]


@pytest.mark.parametrize("command", RM_SPELLINGS)
def test_every_spelling_of_rm_is_found(command: str) -> None:
    analysis = run(command)
    assert "rm" in names(analysis), analysis
    assert not find(analysis, "rm").read_only
    assert not analysis.read_only


# `env -S` splits a string; arithmetic evaluates the output of `$(rm f)`, which may hold a
# subscript that runs code: both are unresolved (and their rm still found above).
RESOLVED_RM = [c for c in RM_SPELLINGS if not c.startswith(("env -S", "((", "echo $(("))]


@pytest.mark.parametrize("command", RESOLVED_RM)
def test_rm_spellings_are_resolved(command: str) -> None:
    assert run(command).unresolved == (), command


@pytest.mark.parametrize(("command", "expected"), [
    ("echo x #'\nrm v.txt", [("echo", ("echo", "x")), ("rm", ("rm", "v.txt"))]),
    ("echo $'\\'' ; rm v.txt #'", [("echo", ("echo", "'")), ("rm", ("rm", "v.txt"))]),
    ("/usr/bin/git status", [("git", ("git", "status"))]),
    ("r''m -f 'a b'", [("rm", ("rm", "-f", "a b"))]),
    ("echo \"a\\\"b\" 'c'\"d\"", [("echo", ("echo", 'a"b', "cd"))]),
    ("echo $(date)", [("date", ("date",)), ("echo", ("echo", "$(date)"))]),
])
def test_commands_and_argv(command: str, expected: list[tuple[str, tuple[str, ...]]]) -> None:
    assert [(c.name, c.argv) for c in run(command).commands] == expected


@pytest.mark.parametrize(("command", "present", "absent"), [
    ("env FOO=1 ls", ["ls"], ["env"]),
    ("nohup nice timeout 3 ls", ["ls"], ["nohup", "nice", "timeout"]),
    ("sudo ls", ["sudo", "ls"], []),
    ("doas ls", ["doas", "ls"], []),
    ("ls | xargs cat", ["xargs", "cat"], []),
    ("bash -c 'ls'", ["ls"], ["bash"]),
    ("command -v rm", ["command"], ["rm"]),
    ("env", ["env"], []),
    ("exec >log", ["exec"], []),
    ("bash script.sh", ["bash"], []),
    ("source env.sh", ["source"], []),
    (". env.sh", ["."], []),
    ("find . -type f", ["find"], []),
])
def test_wrappers_kept_or_transparent(command: str, present: list[str],
                                      absent: list[str]) -> None:
    found = names(run(command))
    for name in present:
        assert name in found, (command, found)
    for name in absent:
        assert name not in found, (command, found)


@pytest.mark.parametrize(("command", "reason"), [
    ("X=rm; $X f", "expansion"),
    ("$X f", "expansion"),
    ("${X} f", "expansion"),
    ("$(echo rm) f", "expansion"),
    ("`echo rm` f", "expansion"),
    ("/bin/r? f", "glob"),
    ("/bin/r* f", "glob"),
    ('eval "$CMD"', "eval"),
    ("eval $1", "eval"),
    ("curl -s x | sh", "pipe"),
    ("cat s | bash", "pipe"),
    ("cat s | bash -s", "pipe"),
    ("cat s | (bash)", "pipe"),
    ("bash <(curl -s x)", "pipe"),
    ("source <(curl -s x)", "pipe"),
    ("curl -s x | bash /dev/stdin", "pipe"),
    ("command_not_found_handle() { rm f; }; foo", "command_not_found_handle"),
    ('bash -c "$C"', "bash -c"),
    ("sh -c", "no command string"),
    ("bash <<EOF\nrm $f\nEOF", "not literal"),
    ("echo 'unterminated", "parsed"),
    ("echo \"unterminated", "parsed"),
    ("if true; then", "parsed"),
    ("echo a\rb", "control"),
    ("echo a\x00b", "control"),
    ("echo \x1b[31m", "control"),
    ("(" * 5000, ""),
    ("(" * 5000 + "x" + ")" * 5000, "deep"),
    ("$(" * 5000, ""),
    ("echo " + "$(echo " * 200 + "x" + ")" * 200, "deep"),
    ("bash -c " + "\"eval 'bash -c " * 5 + "x" + "'\"" * 5, ""),
    ("alias ls='rm -rf /'; ls", "alias"),
    ("hash -p /bin/rm ls; ls", "hash"),
    ("X=/etc; rm $X/passwd", "the line assigns"),
    ("for f in *.txt; do cat \"$f\"; done", "the line assigns"),
    ("d=/tmp; cd $d && ls", "the line assigns"),
    ("PATH=/tmp ls", "PATH"),
    ("export LD_PRELOAD=/tmp/x.so; ls", "LD_PRELOAD"),
    ("coproc rm f", "coproc"),
    ("find / -exec sh -c 'rm {}' \\;", "not literal"),
    ("ls | xargs -I{} sh -c 'rm {}'", "not literal"),
    ("{rm,x} f", ""),
    ("(( $(rm f) ))", "arithmetic"),
    ("echo $(( 1 + $(rm f) ))", "arithmetic"),
    ("cat <<EOF; rm x\nbody\nEOF", "parsed"),
])
def test_fails_closed(command: str, reason: str) -> None:
    analysis = run(command)
    assert analysis.unresolved, analysis
    assert not analysis.read_only
    assert any(reason in r for r in analysis.unresolved), analysis.unresolved


def test_parse_errors_still_report_commands() -> None:
    analysis = run("rm -rf x; echo 'oops")
    assert analysis.unresolved
    assert "rm" in names(analysis)
    assert "rm" in names(run("cat <<EOF; rm x\nbody\nEOF"))


def test_deep_nesting_does_not_raise() -> None:
    for text in ("(" * 5000, "$(" * 5000, "{ " * 5000, "[[ " + "( " * 5000 + "x",
                 "echo " + '"$(' * 3000, "a|" * 5000 + "b", "! " * 5000 + "x",
                 "if x; then " * 2000, "((" + "(" * 5000 + "1" + ")" * 5000 + "))",
                 "! " * 5000 + "x > f", "nice " * 5000 + "rm f",
                 "[ " + " -a ".join(["-f x"] * 3000) + " ]"):
        analysis = run(text)
        assert analysis.unresolved or analysis.commands


@pytest.mark.parametrize("command", [
    "", "   ", "#", ";", "&&", "|", ")", "}", "fi", "done", "esac", "<<", "<<<", ">",
    "$", "${", "$((", "`", "'", '"', "\\", "{}", "[", "[[", "]]", "a=", "=", "((", "))",
    "\ud800", "echo \udcff", "\x00", "cd", "cd -", "xargs", "sudo", "env -S", "find -exec",
    "bash -c ''", "eval", "trap", "time", "exec", "sh <<<", "cat <<", "f() {", "case",
])
def test_odd_input_never_raises(command: str) -> None:
    analysis = run(command)
    assert isinstance(analysis, ShellAnalysis)
    assert not any("could not be analysed" in r for r in analysis.unresolved), analysis


def uses(command: str, name: str | None = None) -> list[PathUse]:
    analysis = run(command)
    if name is None:
        return analysis.uses()
    return list(find(analysis, name).uses)


@pytest.mark.parametrize(("command", "expected"), [
    ("cat ~/.ssh/id_rsa", [PathUse("read", f"{HOME}/.ssh/id_rsa")]),
    ("cat ~", [PathUse("read", HOME)]),
    ("cat $HOME/x", [PathUse("read", f"{HOME}/x")]),
    ("cat ${HOME}/x", [PathUse("read", f"{HOME}/x")]),
    ('cat "$HOME/a b"', [PathUse("read", f"{HOME}/a b")]),
    ("cat $PWD/x", [PathUse("read", f"{CWD}/x")]),
    ("cat '~/x'", [PathUse("read", f"{CWD}/~/x")]),
    ("cat \\~/x", [PathUse("read", f"{CWD}/~/x")]),
    ("cat x=~/y", [PathUse("read", f"{CWD}/x={HOME}/y")]),
    ("grep -r k ~/.ssh", [PathUse("read", f"{HOME}/.ssh", True)]),
    ("grep -R k", [PathUse("read", CWD, True)]),
    ("grep -e k -r .", [PathUse("read", CWD, True)]),
    ("grep -f pats.txt x", [PathUse("read", f"{CWD}/pats.txt"), PathUse("read", f"{CWD}/x")]),
    ("rg foo", [PathUse("read", CWD, True)]),
    ("rg foo src", [PathUse("read", f"{CWD}/src", True)]),
    ("rg --files src", [PathUse("read", f"{CWD}/src", True)]),
    ("echo hi > out.txt", [PathUse("write", f"{CWD}/out.txt")]),
    ("cd sub && rm x", [PathUse("write", f"{CWD}/sub/x")]),
    ("cd /tmp && rm x", [PathUse("write", "/tmp/x")]),
    ("cd && rm x", [PathUse("write", f"{HOME}/x")]),
    ("cd ~/p && rm x", [PathUse("write", f"{HOME}/p/x")]),
    ("cd sub && cd deeper && rm x", [PathUse("write", f"{CWD}/sub/deeper/x")]),
    ("pushd sub && rm x", [PathUse("write", f"{CWD}/sub/x")]),
    ("cd $(x) && rm y", [PathUse("write", None)]),
    ("cd - && rm y", [PathUse("write", None)]),
    ("popd && rm y", [PathUse("write", None)]),
    ("cp a b", [PathUse("read", f"{CWD}/a"), PathUse("write", f"{CWD}/b", True)]),
    ("cp -r a b", [PathUse("read", f"{CWD}/a", True), PathUse("write", f"{CWD}/b", True)]),
    ("cp -t dest a", [PathUse("read", f"{CWD}/a"), PathUse("write", f"{CWD}/dest", True)]),
    ("mv a b", [PathUse("write", f"{CWD}/a", True), PathUse("write", f"{CWD}/b", True)]),
    ("ln -s /etc/passwd link", [PathUse("mention", "/etc/passwd"),
                                PathUse("write", f"{CWD}/link", True)]),
    ("sed -i s/a/b/ f", [PathUse("write", f"{CWD}/f")]),
    ("sed -n 1p f", [PathUse("read", f"{CWD}/f")]),
    ("sed -e s/a/b/ -e s/c/d/ f g", [PathUse("read", f"{CWD}/f"), PathUse("read", f"{CWD}/g")]),
    ("tee f", [PathUse("write", f"{CWD}/f")]),
    ("tee -a f /dev/null", [PathUse("write", f"{CWD}/f"), PathUse("write", "/dev/null")]),
    ("rm -f /dev/null", [PathUse("write", "/dev/null")]),
    ("dd if=a of=b", [PathUse("read", f"{CWD}/a"), PathUse("write", f"{CWD}/b")]),
    ("cat secret/*", [PathUse("read", f"{CWD}/secret", True)]),
    ("cat *", [PathUse("read", CWD, True)]),
    ("cat *.txt", [PathUse("read", CWD, True)]),
    ("cat /etc/*.conf", [PathUse("read", "/etc", True)]),
    # Braces expand to their alternatives, each judged as the path it is.
    ("cat s{a,b}", [PathUse("read", f"{CWD}/sa"), PathUse("read", f"{CWD}/sb")]),
    ("cat {in.txt,~/.ssh/id_rsa}", [PathUse("read", f"{CWD}/in.txt"),
                                    PathUse("read", f"{HOME}/.ssh/id_rsa")]),
    ("cat */../../x", [PathUse("read", None, True)]),
    ("cat 'secret/*'", [PathUse("read", f"{CWD}/secret/*")]),
    ("cat secret/\\*", [PathUse("read", f"{CWD}/secret/*")]),
    ("ls", [PathUse("read", CWD)]),
    ("ls -R src", [PathUse("read", f"{CWD}/src", True)]),
    ("du", [PathUse("read", CWD, True)]),
    ("find", [PathUse("read", CWD, True)]),
    ("find src lib -name x", [PathUse("read", f"{CWD}/src", True),
                              PathUse("read", f"{CWD}/lib", True)]),
    ("find . -delete", [PathUse("write", CWD, True)]),
    ("find /tmp -name x -exec rm {} +", [PathUse("write", "/tmp", True)]),
    ("rm -rf $UNSET/", [PathUse("write", "/", True)]),
    ("rm -rf ../x", [PathUse("write", f"{CWD}/../x", True)]),
    ("rm $1", [PathUse("write", None)]),
    ("rm $RANDOM", [PathUse("write", None)]),
    ("rm ${X:-y}", [PathUse("write", None)]),
    ("rm $(ls)", [PathUse("write", None)]),
    ("rm $((1+1))", [PathUse("write", None)]),
    ("rm ~other/x", [PathUse("write", None)]),
    ("rm $GREETING", [PathUse("write", None)]),
    ('rm "$GREETING"', [PathUse("write", f"{CWD}/hello world")]),
    ("X=/etc; rm $X/passwd", [PathUse("write", None)]),
    ("chmod -R 600 secret", [PathUse("write", f"{CWD}/secret", True)]),
    ("chmod -x f", [PathUse("write", f"{CWD}/f")]),
    ("chown user:group f", [PathUse("write", f"{CWD}/f")]),
    ("touch -r ref f", [PathUse("read", f"{CWD}/ref"), PathUse("write", f"{CWD}/f")]),
    ("mkdir -p a/b", [PathUse("write", f"{CWD}/a/b")]),
    ("sort -o out in", [PathUse("write", f"{CWD}/out"), PathUse("read", f"{CWD}/in")]),
    ("uniq in out", [PathUse("read", f"{CWD}/in"), PathUse("write", f"{CWD}/out")]),
    ("xxd in out", [PathUse("read", f"{CWD}/in"), PathUse("write", f"{CWD}/out")]),
    ("head -n 5 f", [PathUse("read", f"{CWD}/f")]),
    ("tail -f log", [PathUse("read", f"{CWD}/log")]),
    ("jq .a data.json", [PathUse("read", f"{CWD}/data.json")]),
    ("awk '{print $1}' f", [PathUse("read", f"{CWD}/f")]),
    ("awk -F: -v x=1 '{print}' n=2 f", [PathUse("read", f"{CWD}/f")]),
    ("test -f x", [PathUse("read", f"{CWD}/x")]),
    ("[ -d ~/x ]", [PathUse("read", f"{HOME}/x")]),
    ("[[ a -nt b ]]", [PathUse("read", f"{CWD}/a"), PathUse("read", f"{CWD}/b")]),
    ("git status", [PathUse("read", CWD, True)]),
    ("git -C /repo status", [PathUse("read", "/repo", True)]),
    ("git commit -m x", [PathUse("write", CWD, True)]),
    ("git log --output=/tmp/o", [PathUse("write", "/tmp/o"), PathUse("write", CWD, True)]),
    ("diff -r a b", [PathUse("read", f"{CWD}/a", True), PathUse("read", f"{CWD}/b", True)]),
    ("diff <(ls a) <(ls b)", [PathUse("read", f"{CWD}/a"), PathUse("read", f"{CWD}/b")]),
    ("echo f | xargs rm", [PathUse("write", None)]),
    ("echo f | xargs rm -r", [PathUse("write", None, True)]),
    ("xargs -a list rm", [PathUse("read", f"{CWD}/list"), PathUse("write", None)]),
    ("patch -p1 < fix.diff", [PathUse("write", CWD, True), PathUse("read", f"{CWD}/fix.diff")]),
    ("env -C /tmp rm x", [PathUse("write", "/tmp/x")]),
    ("sudo -D /tmp rm x", [PathUse("write", "/tmp/x")]),
    ("time -o t.txt ls", [PathUse("write", f"{CWD}/t.txt"), PathUse("read", CWD)]),
    ("mytool --out=build/x in.txt", [PathUse("mention", f"{CWD}/build/x"),
                                     PathUse("mention", f"{CWD}/in.txt")]),
    ("bash script.sh", [PathUse("read", f"{CWD}/script.sh")]),
    ("source ./env.sh", [PathUse("read", f"{CWD}/env.sh")]),
])
def test_path_uses(command: str, expected: list[PathUse]) -> None:
    found = uses(command)
    for use in expected:
        assert use in found, (command, found)


@pytest.mark.parametrize(("command", "expected"), [
    ("cd sub; rm x", [PathUse("write", f"{CWD}/sub/x"), PathUse("write", f"{CWD}/x")]),
    ("cd sub || exit; rm x", [PathUse("write", f"{CWD}/sub/x"), PathUse("write", f"{CWD}/x")]),
    ("(cd sub && rm x); rm y", [PathUse("write", f"{CWD}/sub/x"), PathUse("write", f"{CWD}/y")]),
    ("cd sub & rm x", [PathUse("write", f"{CWD}/x")]),
    ("cd sub | rm x", [PathUse("write", f"{CWD}/x")]),
    ("echo $(cd sub) && rm x", [PathUse("write", f"{CWD}/x")]),
    ("if true; then cd sub; fi; rm x", [PathUse("write", None)]),
    ("for d in a b; do rm x; cd $d; done", [PathUse("write", f"{CWD}/x"),
                                           PathUse("write", None)]),
    ("f() { cd /; }; f; rm x", [PathUse("write", None)]),
    ("source x.sh; rm y", [PathUse("read", f"{CWD}/x.sh"), PathUse("write", None)]),
    ("eval 'cd /tmp' && rm x", [PathUse("write", "/tmp/x")]),
    ("bash -c 'cd /tmp' && rm x", [PathUse("write", f"{CWD}/x")]),
    ("env cd /tmp && rm x", [PathUse("write", f"{CWD}/x")]),
    ("builtin cd /tmp && rm x", [PathUse("write", "/tmp/x")]),
    ("cd /tmp && bash -c 'rm x'", [PathUse("write", "/tmp/x")]),
    ("cd /tmp && echo $(rm x)", [PathUse("write", "/tmp/x")]),
    ("cd /tmp && cat $PWD/x", [PathUse("read", "/tmp/x")]),
])
def test_cd_tracking(command: str, expected: list[PathUse]) -> None:
    found = [u for u in uses(command) if u.path is None or not u.path.endswith(("/a", "/b"))]
    assert sorted(found, key=repr) == sorted(expected, key=repr), (command, found)


@pytest.mark.parametrize(("command", "expected"), [
    ("echo x > /dev/null", []),
    ("echo x 2>/dev/null >/dev/stderr", []),
    ("echo x >&2", []),
    ("echo x 2>&1", []),
    ("echo x 1>&-", []),
    ("cat < /dev/null", []),
    ("echo x > /dev/fd/3", []),
    ("cd /dev && echo x > null", []),
    ("cat <<EOF\nbody\nEOF", []),
    ("cat <<< word", []),
    ("echo x >> log", [PathUse("write", f"{CWD}/log")]),
    ("echo x >| log", [PathUse("write", f"{CWD}/log")]),
    ("echo x &> log", [PathUse("write", f"{CWD}/log")]),
    ("echo x &>> log", [PathUse("write", f"{CWD}/log")]),
    ("echo x 2> err", [PathUse("write", f"{CWD}/err")]),
    ("echo x >& log", [PathUse("write", f"{CWD}/log")]),
    ("wc -l < in", [PathUse("read", f"{CWD}/in")]),
    ("echo x > $(mktemp)", [PathUse("write", None)]),
    ("> trunc", [PathUse("write", f"{CWD}/trunc")]),
    ("echo > a b", [PathUse("write", f"{CWD}/a")]),
    ("cat > f.py <<'EOF'\nprint(1)\nEOF", [PathUse("write", f"{CWD}/f.py")]),
])
def test_redirections(command: str, expected: list[PathUse]) -> None:
    assert uses(command) == expected


@pytest.mark.parametrize(("command", "name"), [
    ("{ echo a; echo b; } > out", "echo"),
    ("( echo a ) > out", "echo"),
    ("while true; do echo a; done > out", "echo"),
    ("for i in 1; do echo $i; done >> out", "echo"),
    ("if true; then echo; fi > out", "echo"),
    ("[[ -n x ]] > out", "[["),
])
def test_redirection_of_compound_reaches_commands(command: str, name: str) -> None:
    command_found = find(run(command), name)
    assert PathUse("write", f"{CWD}/out") in command_found.uses
    assert not command_found.read_only


def test_compound_input_redirection() -> None:
    analysis = run("while read l; do echo $l; done < in.txt")
    assert PathUse("read", f"{CWD}/in.txt") in analysis.uses()
    assert analysis.read_only


@pytest.mark.parametrize(("command", "read_only"), [
    ("ls", True),
    ("ls -la src | grep foo | head -5", True),
    ("cat a b && wc -l c", True),
    ("echo x > /dev/null", True),
    ("echo x > out", False),
    ("git status", True),
    ("git log --oneline -5", True),
    ("git --no-pager diff HEAD~1", True),
    ("git -C /repo show HEAD", True),
    ("git branch", True),
    ("git branch -a", True),
    ("git branch new-feature", False),
    ("git commit -m x", False),
    ("git -c core.pager=evil log", False),
    ("git diff --output=x", False),
    ("git log --ext-diff", False),
    ("git push", False),
    ("find . -name '*.py'", True),
    ("find . -delete", False),
    ("find . -exec cat {} \\;", False),
    ("find . -fprint out", False),
    ("sort f", True),
    ("sort -o out f", False),
    ("sort --output=out f", False),
    ("sort --compress-program=sh f", False),
    ("uniq a", True),
    ("uniq a b", False),
    ("date", True),
    ("date +%s", True),
    ("date -s 2020-01-01", False),
    ("date 0101000020", False),
    ("file x", True),
    ("file -C -m magic", False),
    ("rg foo", True),
    ("rg --pre cat foo", False),
    ("rg --pre=cat foo", False),
    ("sed -n 1p f", True),
    ("sed 's/a/b/g' f", True),
    ("sed -i s/a/b/ f", False),
    ("sed --in-place s/a/b/ f", False),
    ("sed --in-pl s/a/b/ f", False),
    ("sed -ni p f", False),
    ("sed 's/a/b/w out' f", False),
    ("sed '1e rm f' f", False),
    ("sed 'w out' f", False),
    ("sed -f script.sed f", False),
    ("sed \"$S\" f", False),
    ("awk '{print $1}' f", True),
    ("awk '{system(\"rm f\")}' f", False),
    ("awk '{print > \"out\"}' f", False),
    ("awk '{print | \"sh\"}' f", False),
    ("awk -i inplace '{print}' f", False),
    ("awk -f prog.awk f", False),
    ("jq . f.json", True),
    ("xxd f", True),
    ("xxd f out", False),
    ("tree", True),
    ("tree -o out", False),
    ("less -o log f", False),
    ("hostname", True),
    ("hostname evil", False),
    ("env", True),
    ("env FOO=1 ls", False),
    ("LC_ALL=C sort f", True),
    ("GIT_EXTERNAL_DIFF=x git diff", False),
    ("export GIT_PAGER=x; git log", False),
    ("X=1; ls", True),
    ("echo f | xargs cat", False),
    ("echo f | xargs rm", False),
    ("sudo ls", False),
    ("bash -c 'ls'", True),
    ("bash -c 'ls' > out", False),
    ("bash script.sh", False),
    ("eval 'ls'", True),
    ("command -v git", True),
    ("type ls", True),
    ("cd sub && ls", True),
    ("pwd; whoami; id; uname -a", True),
    ("echo $(rm f)", False),
    ("echo $(ls)", True),
    ("ls > /dev/null 2>&1 || echo missing", True),
    ("test -f x && cat x", True),
    ("[ -f x ] && cat x", True),
    ("[[ -f x ]]", True),
    ("f() { ls; }; f", False),
    ("npm test", False),
    ("", False),
    ("X=1", False),
    ("rm f", False),
    ("unknowncmd", False),
    # The output of `ls` may hand cat options: a word without a known meaning.
    ("cat $(ls)", False),
    ('grep "$HOME" f', True),
    ('p=-f/etc/shadow; grep "$p" f', False),
    ("diff a b", True),
    ("stat -c %s f", True),
    ("md5sum f", True),
    ("readlink -f x", True),
    ("base64 f", True),
])
def test_read_only(command: str, read_only: bool) -> None:
    assert run(command).read_only is read_only, run(command)


def test_find_exec_reports_placeholder_as_start_paths() -> None:
    analysis = run("find src -name '*.tmp' -exec rm -f {} +")
    rm = find(analysis, "rm")
    assert rm.argv == ("rm", "-f", "{}")
    assert rm.uses == (PathUse("write", f"{CWD}/src", True),)


def test_execdir_relative_paths_are_unknown() -> None:
    rm = find(run("find . -execdir rm other {} \\;"), "rm")
    assert PathUse("write", None) in rm.uses


def test_xargs_keeps_unknown_arguments_out_of_argv() -> None:
    analysis = run("git ls-files | xargs -0 grep -l TODO")
    grep = find(analysis, "grep")
    assert grep.argv == ("grep", "-l", "TODO")
    assert grep.uses == (PathUse("read", None),)
    assert find(analysis, "xargs").argv == ("xargs", "-0", "grep", "-l", "TODO")


def test_sudo_is_reported_with_its_inner_command() -> None:
    analysis = run("sudo -u root -g wheel rm -rf /var/x")
    assert names(analysis) == ["sudo", "rm"]
    assert find(analysis, "sudo").argv == ("sudo", "-u", "root", "-g", "wheel", "rm", "-rf",
                                           "/var/x")
    assert find(analysis, "rm").uses == (PathUse("write", "/var/x", True),)


def test_wrapper_redirections_reach_the_wrapped_command() -> None:
    analysis = run("timeout 5 cat f > out")
    assert names(analysis) == ["cat"]
    assert PathUse("write", f"{CWD}/out") in find(analysis, "cat").uses


def test_heredoc_with_unquoted_expansion_is_analysed_and_unresolved() -> None:
    analysis = run("bash <<EOF\nrm $TARGET\nEOF")
    assert "rm" in names(analysis)
    assert analysis.unresolved


def test_heredoc_without_expansion_is_resolved() -> None:
    analysis = run("sh <<EOF\nrm plain\nEOF")
    assert names(analysis) == ["rm"]
    assert analysis.unresolved == ()


def test_git_commit_with_heredoc_message() -> None:
    analysis = run('git commit -m "$(cat <<\'EOF\'\nfix: $thing `x`\nEOF\n)"')
    assert names(analysis) == ["cat", "git"]
    assert analysis.unresolved == ()


def test_shell_code_nesting_is_bounded() -> None:
    command = "x"
    for _ in range(12):
        command = "eval " + command.replace("\\", "\\\\").replace("'", "\\'")
    analysis = run(command)
    assert any("nested more than" in r for r in analysis.unresolved), analysis


def test_alias_definition_is_unresolved_but_listing_is_not() -> None:
    assert run("alias ll='ls -l'").unresolved
    assert not run("alias").unresolved


def test_analysis_is_cached_parser_and_fast() -> None:
    import time

    run("ls")
    start = time.perf_counter()
    for _ in range(50):
        run("cd sub && grep -rn 'foo' src | head -20 > /tmp/out 2>&1")
    assert (time.perf_counter() - start) / 50 < 0.02


@pytest.mark.parametrize("command", ["ls && cat x > out", "ls | cat x > out",
                                     "ls || true && cat x > out", "ls; ! cat x > out"])
def test_trailing_redirection_belongs_to_the_last_command(command: str) -> None:
    # The grammar hangs it on the whole list or pipeline; bash gives it to the last command.
    analysis = run(command)
    assert find(analysis, "ls").uses == (PathUse("read", CWD),)
    assert find(analysis, "ls").read_only
    assert PathUse("write", f"{CWD}/out") in find(analysis, "cat").uses


@pytest.mark.parametrize(("command", "name", "argv", "expected"), [
    # `$(<file)` reads the file without any command.
    ("echo $(<~/.ssh/id_rsa)", ":", (":",), [PathUse("read", f"{HOME}/.ssh/id_rsa")]),
    # Words after a redirection target belong to the command.
    ("echo >&2 x y", "echo", ("echo", "x", "y"), []),
    ("cat >f a b", "cat", ("cat", "a", "b"), [PathUse("write", f"{CWD}/f"),
                                              PathUse("read", f"{CWD}/a")]),
    ("rm 2>/dev/null f", "rm", ("rm", "f"), [PathUse("write", f"{CWD}/f")]),
    # The `0` of `0<in` is a descriptor, not an argument.
    ("cat 0<in", "cat", ("cat",), [PathUse("read", f"{CWD}/in")]),
    # `-f x -a -d y` parses as `-f (x -a (-d y))`.
    ("[ -f x -a -d y ]", "[", ("[",), [PathUse("read", f"{CWD}/x"),
                                        PathUse("read", f"{CWD}/y")]),
    ("[[ -e ~/x ]]", "[[", ("[[",), [PathUse("read", f"{HOME}/x")]),
])
def test_grammar_quirks(command: str, name: str, argv: tuple[str, ...],
                        expected: list[PathUse]) -> None:
    command_found = find(run(command), name)
    assert command_found.argv == argv
    for use in expected:
        assert use in command_found.uses, command_found


def test_time_with_a_group_still_reports_the_command() -> None:
    # tree-sitter-bash knows `time` only as a command, so `{` becomes its argument.
    analysis = run("time { rm x; }")
    assert "rm" in names(analysis)
    assert analysis.unresolved


def test_cd_in_what_the_grammar_hangs_on_a_heredoc_is_followed() -> None:
    analysis = run("cat <<EOF && cd sub\nbody\nEOF\nrm x")
    assert find(analysis, "rm").uses == (PathUse("write", None),)


@pytest.mark.parametrize(("command", "argv"), [
    # bash joins backslash-newline before splitting words; the grammar splits there.
    ("r\\\nm f", ("rm", "f")),
    ('"r"\\\nm f', ("rm", "f")),
    ("cat ~/.ss\\\nh/id", ("cat", "~/.ssh/id")),
    ("docker run \\\n  -v x:y \\\n  img", ("docker", "run", "-v", "x:y", "img")),
    ("echo 'a\\\nb'", ("echo", "a\\\nb")),
    ("echo a\\\\\nb", ("echo", "a\\")),
])
def test_line_continuations(command: str, argv: tuple[str, ...]) -> None:
    assert run(command).commands[0].argv == argv


def test_continuation_in_comment_does_not_join() -> None:
    assert names(run("echo x # c\\\nrm d")) == ["echo", "rm"]
