-- c
create table "a""b" (`l` string) /* x */ WITH ('