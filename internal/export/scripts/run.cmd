@echo off
rem Runs the loop bundled with this success export (loop.toml, beside this
rem script) on a repository, with loop-action.
rem
rem Usage: run.cmd [ROOT] [loop-action run flags...]
rem   ROOT  the loop root to run in: the repository (default: the current
rem         directory). Paths in loop.toml are relative to it.
rem Exits 127 when loop-action.exe is not on PATH, 2 when ROOT is not a
rem directory, and otherwise with loop-action's exit code.
setlocal
set "HERE=%~dp0"
set "ROOT=%CD%"
set "FIRST=%~1"
if not defined FIRST goto root_set
if "%FIRST:~0,1%"=="-" goto root_set
for %%I in ("%~1") do set "ROOT=%%~fI"
shift
:root_set
if "%ROOT:~-1%"=="\" set "ROOT=%ROOT%."
if exist "%ROOT%\*" goto root_ok
echo run.cmd: the loop root "%ROOT%" is not a directory 1>&2
cmd /c exit 2
goto end
:root_ok
set "LOOP_ACTION="
for %%I in (loop-action.exe) do set "LOOP_ACTION=%%~$PATH:I"
if defined LOOP_ACTION goto found
echo run.cmd: loop-action.exe is not on PATH: install it (go install github.com/loop-action/loop-action/cmd/loop-action@latest) and try again 1>&2
cmd /c exit 127
goto end
:found
set ARGS=
:collect
if "%~1"=="" goto run
set ARGS=%ARGS% %1
shift
goto collect
:run
"%LOOP_ACTION%" -C "%ROOT%" --config "%HERE%loop.toml" run %ARGS%
:end
exit /b %ERRORLEVEL%
