-- c
create table "a""b" (`l` string) /* x */ WITH ('connector'='s3', bucket='f