-- c
cr