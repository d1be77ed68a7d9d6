module catalyst

go 1.19
