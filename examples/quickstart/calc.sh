# calc.sh: the arithmetic under test. add has a seeded bug.
add() {
	echo $(($1 - $2))
}
