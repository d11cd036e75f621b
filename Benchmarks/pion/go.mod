module pionbench

go 1.19
